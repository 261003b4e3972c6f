"""Changes that calibration makes to a checkout: a null patch, and a known slowdown.

A null patch adds a comment to the program's entry file: it goes through the build like any
candidate and changes nothing a workload can see, so any verdict other than "not accepted" on it
is the rule's error.

A known slowdown is a busy loop of a chosen number of iterations at program start, in the
target's own language, so the toolchain builds it like any other code. Measuring the slowed
build as the baseline and the untouched build as the candidate gives a candidate with a known
win: with D seconds of extra work on a workload of W seconds, the candidate is D / (W + D)
faster. The loop is CPU work, not a wait on the clock: when the machine is busier, the loop
slows down with the program's own work, so the win stays the same share, as a real win in the
program's code would. (A loop timed on the clock was tried first: on a machine whose load rose
from 2 to 4 during a benchmark, a wait sized for a 5 % win on a 36 ms workload measured as a
3.9 % win, because the workload slowed down and the wait did not.) `sizing.py` turns a wanted
win into a number of iterations by measuring a probe build.

Command targets (any build system) cannot be rewritten generically; calibrate asks for a known
win patch there instead.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from speedproof.ground.errors import SpeedproofError
from speedproof.manifest import Manifest

NULL_COMMENT = "speedproof calibrate: a null change, this comment alters nothing"
GO_SLOWDOWN_FILE = "zz_speedproof_slowdown.go"


class InjectionError(SpeedproofError):
    """The target's language or layout gives calibration nowhere to put its change."""


def entry_file(manifest: Manifest, target_root: Path) -> Path:
    """The file a Python target starts in, or one Go file of the main package."""
    target = manifest.target
    if target.language == "python":
        return _python_entry(manifest, target_root)
    if target.language == "go":
        folder = target_root / target.package
        sources = sorted(p for p in folder.glob("*.go") if not p.name.endswith("_test.go"))
        if not sources:
            raise InjectionError(f"no Go source file in the target package {folder}")
        return sources[0]
    raise InjectionError(
        "a command target cannot be rewritten by calibrate; pass a known win with --win PATCH"
    )


def _python_entry(manifest: Manifest, target_root: Path) -> Path:
    target = manifest.target
    if target.script:
        return target_root / target.script
    dotted = str(target.module).replace(".", "/")
    for root in target.source_roots:
        base = target_root / root / dotted
        for candidate in (base / "__main__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    raise InjectionError(f"cannot find the file of module {target.module!r} in the source roots")


def add_null_change(manifest: Manifest, target_root: Path) -> Path:
    """Append a comment to the entry file; returns the file changed."""
    path = entry_file(manifest, target_root)
    marker = "#" if manifest.target.language == "python" else "//"
    text = path.read_text(encoding="utf-8")
    ending = "" if text.endswith("\n") else "\n"
    path.write_text(f"{text}{ending}{marker} {NULL_COMMENT}\n", encoding="utf-8")
    return path


def add_slowdown(manifest: Manifest, target_root: Path, iterations: int) -> Path:
    """Make the program spin `iterations` times when it starts; returns the file written."""
    if iterations <= 0:
        raise ValueError(f"a slowdown needs a positive number of iterations, got {iterations!r}")
    if manifest.target.language == "go":
        return _go_slowdown(manifest, target_root, iterations)
    path = entry_file(manifest, target_root)
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    # The running value is kept small and used, so no optimizer can drop the loop.
    spin = cst.parse_module(
        "_speedproof_spin = 0\n"
        f"for _speedproof_i in range({iterations}):\n"
        "    _speedproof_spin = (_speedproof_spin + _speedproof_i) & 0xFFFF\n"
    ).body
    at = _after_header(module)
    body = [*module.body[:at], *spin, *module.body[at:]]
    path.write_text(module.with_changes(body=body).code, encoding="utf-8")
    return path


def _after_header(module: cst.Module) -> int:
    """The index after a leading docstring and `from __future__` imports (they must stay first)."""
    index = 0
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        first = statement.body[0]
        docstring = isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString)
        future = isinstance(first, cst.ImportFrom) and _is_future(first)
        if not (docstring and index == 0) and not future:
            break
        index += 1
    return index


def _is_future(node: cst.ImportFrom) -> bool:
    return isinstance(node.module, cst.Name) and node.module.value == "__future__"


def _go_slowdown(manifest: Manifest, target_root: Path, iterations: int) -> Path:
    folder = target_root / manifest.target.package
    package = _go_package(entry_file(manifest, target_root))
    path = folder / GO_SLOWDOWN_FILE
    path.write_text(
        f"package {package}\n\n"
        "// A known slowdown that speedproof calibrate injects: a busy loop at start. The result\n"
        "// goes to a package variable, so the compiler cannot drop the loop.\n"
        "var speedproofSpin int\n\n"
        "func init() {\n"
        "\ts := 0\n"
        f"\tfor i := 0; i < {iterations}; i++ {{\n"
        "\t\ts = (s + i) & 0xFFFF\n"
        "\t}\n"
        "\tspeedproofSpin = s\n"
        "}\n",
        encoding="utf-8",
    )
    return path


def _go_package(source: Path) -> str:
    for line in source.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "package":
            return words[1]
    raise InjectionError(f"{source} has no package clause")


def extra_for_win(win_pct: float, baseline_wall_s: float) -> float:
    """The extra work (seconds) that makes the untouched build `win_pct` % faster.

    The candidate is faster by D / (W + D); solving D / (W + D) = p gives D = W p / (1 - p).
    """
    if not 0.0 < win_pct < 100.0:
        raise ValueError(f"a win must lie strictly between 0 and 100 %, got {win_pct!r}")
    share = win_pct / 100.0
    return baseline_wall_s * share / (1.0 - share)
