"""The manifest's `go test` arguments (`[tests] args`) translated for the two steps speedproof
runs them in: the compile step (`go test -c`) and the test binary; an unsupported flag fails by
name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from speedproof.ground.errors import InfrastructureError

# The `go test` flags `[tests] args` may carry (values given with `=`), by where they go: the
# compile step (`go test -c`), the test binary (as `-test.NAME`), or nowhere (the run always
# reports with `-test.v=test2json`; vet never runs). Anything else is refused by name.
_BUILD_FLAGS = {"tags": True, "gcflags": True, "ldflags": True, "asmflags": True, "trimpath": False}
_TEST_FLAGS = {
    **dict.fromkeys(("run", "skip", "count", "cpu", "parallel", "shuffle"), True),
    **dict.fromkeys(("short", "failfast"), False),
}
_IGNORED_FLAGS = ("v", "json", "vet=off")
_REFUSED_WHY = {
    "race": "the race detector needs cgo, which speedproof's Go builds turn off",
    "timeout": "the tests' time limit is [tests] timeout_s",
    "vet": "vet does not run; only -vet=off is accepted",
}


@dataclass(frozen=True)
class GoTestArgs:
    """`[tests] args` split into the compile step's flags, the test binary's, and packages."""

    build: tuple[str, ...]
    run: tuple[str, ...]
    patterns: tuple[str, ...]


def _translate(arg: str) -> tuple[str, str]:
    """(`build` | `run` | `ignored`, the flag as that step takes it) for one `go test` flag."""
    name, has_value, value = arg.lstrip("-").partition("=")
    if arg.lstrip("-") in _IGNORED_FLAGS or name in ("v", "json"):
        return "ignored", arg
    for where, table, prefix in (("build", _BUILD_FLAGS, "-"), ("run", _TEST_FLAGS, "-test.")):
        if name not in table:
            continue
        if table[name] and not has_value:
            raise InfrastructureError(f"[tests] args: give {arg} its value with `=` ({arg}=…)")
        return where, f"{prefix}{name}" + (f"={value}" if has_value else "")
    supported = ", ".join(f"-{n}" for n in (*_BUILD_FLAGS, *_TEST_FLAGS, *_IGNORED_FLAGS))
    why = _REFUSED_WHY.get(name, f"speedproof runs Go tests with these only: {supported}")
    raise InfrastructureError(f"[tests] args: the go test flag {arg} is not supported: {why}")


def go_test_args(args: Sequence[str]) -> GoTestArgs:
    """Translate the manifest's `go test` arguments; an unsupported flag fails by name."""
    steps: dict[str, list[str]] = {"build": [], "run": [], "ignored": []}
    for arg in args:
        if arg.startswith("-"):
            where, flag = _translate(arg)
            steps[where].append(flag)
    patterns = tuple(a for a in args if not a.startswith("-"))
    return GoTestArgs(tuple(steps["build"]), tuple(steps["run"]), patterns or ("./...",))
