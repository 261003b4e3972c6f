"""What every toolchain shares: the tree it works on, its results, and how it runs commands.

A toolchain is two halves chosen independently: a *builder* picked by `[target] language` (go,
python, command) and a *test runner* picked by `[tests] runner` (go, pytest, unittest, command),
so a Go program tested by a shell script is as ordinary as a Python one tested by pytest.

Every build and every test run goes through the sandbox with an environment built from scratch
(`build_env`): the manifest's `env_allow` plus the toolchain's own variables, nothing inherited.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, cast, get_args

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import ProcessResult, run_process
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, SandboxSpec, build_env
from speedproof.manifest import Manifest

Outcome = Literal["passed", "failed", "skipped", "error"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
# Outcomes that count as "did not pass because something went wrong" (a skip is not one).
BAD: frozenset[str] = frozenset({"failed", "error"})

# A build that takes longer than 15 minutes is hung, not slow: the largest Go CLI we know of
# (gojq, gron, scc) builds cold in under 60 s on two cores.
BUILD_TIMEOUT_S = 900.0
# Version probes run our own tools with no target code; 60 s covers a cold disk.
PROBE_TIMEOUT_S = 60.0
# Logs are for people and the ledger; the last 200 000 characters hold the failures.
LOG_LIMIT = 200_000
# One failing test's own output, kept for the proposer and the report.
FAILURE_LIMIT = 4_000


def default_cache_dir() -> Path:
    """Where speedproof keeps caches shared across runs: $SPEEDPROOF_CACHE_DIR, else XDG."""
    explicit = os.environ.get("SPEEDPROOF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "speedproof"


def clip(text: str, limit: int = LOG_LIMIT) -> str:
    """The end of `text`: failures and summaries come last in every tool's output."""
    if len(text) <= limit:
        return text
    return f"[{len(text) - limit} earlier characters dropped]\n" + text[-limit:]


def process_log(result: ProcessResult) -> str:
    """stdout then stderr of one command, decoded, with a line saying how it ended."""
    parts = [result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")]
    text = "".join(part if part.endswith("\n") or not part else part + "\n" for part in parts)
    return text + ended(result) + "\n"


def ended(result: ProcessResult) -> str:
    if result.timed_out:
        return f"(killed after {result.wall_s:.1f} s: timed out)"
    return f"(exit {result.exit_code} after {result.wall_s:.2f} s)"


@dataclass(frozen=True)
class Tree:
    """One side's checkout: the git worktree, the target folder in it, and a build folder.

    `out` holds what a build produces (binaries, byte-code, test reports). It must lie outside
    the worktree so that nothing speedproof writes can show up in what git says the patch changed.
    """

    side: Side
    worktree: Path
    root: Path
    out: Path

    def checked(self) -> Tree:
        worktree, root, out = self.worktree.resolve(), self.root.resolve(), self.out.resolve()
        if not root.is_relative_to(worktree):
            raise InfrastructureError(f"target folder {root} is not inside the worktree {worktree}")
        if out.is_relative_to(worktree):
            raise InfrastructureError(
                f"build folder {out} must lie outside the worktree {worktree}"
            )
        out.mkdir(parents=True, exist_ok=True)
        return Tree(side=self.side, worktree=worktree, root=root, out=out)


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    program: Program | None
    log: str
    duration_s: float
    commands: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class TestRun:
    """Per-test outcomes of one run. A test id missing from `outcomes` did not run.

    `ran` is False when the run produced no trustworthy report (no report file, an unparsable
    one, a timeout, a runner that could not start); `note` then says why in words.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, whatever its name says

    outcomes: dict[str, Outcome]
    ran: bool
    log: str
    duration_s: float
    command: tuple[str, ...]
    timed_out: bool = False
    note: str = ""
    # The output of each test that did not pass, clipped: what a person or a proposer reads.
    failures: dict[str, str] = field(default_factory=dict)
    cached: bool = False
    # How many tests the runner collected, when it can say so through a channel of its own
    # (pytest: speedproof's plugin; unittest: speedproof's runner); None for runners that cannot.
    collected: int | None = None
    # Where the runner's channels disagreed about this run (the report against speedproof's own
    # record, the exit status against the outcomes): the run's results cannot be believed.
    tampered: tuple[str, ...] = ()
    # What was cross-checked and agreed, in words, for the gate's detail.
    checked: str = ""
    # The outcome ids that stand for a whole module (one that failed to import, or was skipped
    # whole) rather than a test, when the runner names them (unittest: `tests.test_x`, whose tests
    # are `tests.test_x.TestCase.test_name`). None: pytest's node ids, where such an id is the
    # module's path with no `::`.
    modules: tuple[str, ...] | None = None
    # How the run's harness was made, one entry each, compared with the baseline's by the test
    # gate (docs/adr/0062, 0063): pytest's hook implementations and item classes, the programs a
    # Go test binary started. An entry the baseline's run lacks is a harness the candidate changed.
    harness: tuple[str, ...] = ()

    def ids(self, *wanted: Outcome) -> tuple[str, ...]:
        return tuple(sorted(i for i, o in self.outcomes.items() if o in wanted))

    def module_ids(self) -> tuple[str, ...]:
        """Outcome ids that stand for whole modules; none from a runner that does not count what
        it collects (go, command), whose ids say nothing of modules."""
        if self.collected is None:
            return ()
        if self.modules is not None:
            return tuple(i for i in self.modules if i in self.outcomes)
        return tuple(i for i in self.outcomes if "::" not in i)

    def explains(self, test_id: str) -> bool:
        """Whether `test_id` lies in a module this run failed to collect or skipped whole: a test
        missing for that reason is accounted for, not lost."""
        # pytest: `tests/test_x.py::T::test_a` under `tests/test_x.py`, or `tests/sub/...` under a
        # package `tests/sub`; unittest: `tests.test_x.T.test_a` under `tests.test_x`.
        joins = ("::", "/") if self.modules is None else (".",)
        broken = [m for m in self.module_ids() if self.outcomes[m] != "passed"]
        return any(test_id.startswith(m + join) for m in broken for join in joins)

    def counts(self) -> dict[str, int]:
        return {name: sum(1 for o in self.outcomes.values() if o == name) for name in OUTCOMES}

    def describe(self) -> str:
        """`12 passed, 1 failed, 0 skipped, 0 error in 1.42 s` or why the run did not happen."""
        if not self.ran:
            return f"did not run: {self.note or 'no report'}"
        counts = ", ".join(f"{n} {name}" for name, n in self.counts().items())
        return f"{counts} in {self.duration_s:.2f} s"

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": dict(sorted(self.outcomes.items())),
            "ran": self.ran,
            "log": self.log,
            "duration_s": self.duration_s,
            "command": list(self.command),
            "timed_out": self.timed_out,
            "note": self.note,
            "failures": dict(sorted(self.failures.items())),
            "collected": self.collected,
            "tampered": list(self.tampered),
            "checked": self.checked,
            "modules": None if self.modules is None else list(self.modules),
            "harness": list(self.harness),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestRun:
        """Rebuild a run from `to_json`; anything malformed is a ValueError, never a guess."""
        outcomes = data["outcomes"]
        if not isinstance(outcomes, dict) or any(o not in OUTCOMES for o in outcomes.values()):
            raise ValueError("outcomes must map test ids to passed/failed/skipped/error")
        return cls(
            outcomes={str(k): cast(Outcome, v) for k, v in outcomes.items()},
            ran=bool(data["ran"]),
            log=str(data["log"]),
            duration_s=float(data["duration_s"]),
            command=tuple(str(a) for a in data["command"]),
            timed_out=bool(data["timed_out"]),
            note=str(data["note"]),
            failures={str(k): str(v) for k, v in dict(data["failures"]).items()},
            collected=None if data.get("collected") is None else int(data["collected"]),
            tampered=tuple(str(t) for t in data.get("tampered", ())),
            checked=str(data.get("checked", "")),
            modules=_modules(data.get("modules")),
            harness=tuple(str(h) for h in data.get("harness", ())),
        )


def _modules(data: Any) -> tuple[str, ...] | None:
    """`TestRun.modules` from JSON; absent (a cache written before runners named modules) is
    pytest's rule, which is what every such run followed."""
    if data is None:
        return None
    if not isinstance(data, list):
        raise ValueError("modules must be a list of test ids")
    return tuple(str(m) for m in data)


def merge_runs(runs: Sequence[TestRun]) -> TestRun:
    """Several invocations (a re-run split by package, say) seen as one run."""
    if len(runs) == 1:
        return runs[0]
    outcomes: dict[str, Outcome] = {}
    failures: dict[str, str] = {}
    modules: tuple[str, ...] | None = None
    for run in runs:
        outcomes.update(run.outcomes)
        failures.update(run.failures)
        if run.modules is not None:
            modules = (*(modules or ()), *run.modules)
    return TestRun(
        outcomes=outcomes,
        ran=all(r.ran for r in runs),
        log=clip("".join(r.log for r in runs)),
        duration_s=sum(r.duration_s for r in runs),
        command=runs[0].command if runs else (),
        timed_out=any(r.timed_out for r in runs),
        note="; ".join(r.note for r in runs if r.note),
        failures=failures,
        tampered=tuple(t for r in runs for t in r.tampered),
        modules=modules,
    )


@dataclass(frozen=True)
class Context:
    """What every builder and runner of one target shares: manifest, sandbox, cache folder."""

    manifest: Manifest
    sandbox: Sandbox
    caches: Path
    build_timeout_s: float = BUILD_TIMEOUT_S
    # Toolchain and interpreter folders (GOROOT, a venv and the Python under it): visible,
    # read-only, to every build, test and run; nothing else outside the tree is.
    tools: tuple[Path, ...] = ()

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return build_env(self.manifest.sandbox.env_allow, extra)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        writable: Sequence[Path],
        env: Mapping[str, str],
        timeout_s: float,
        readable: Sequence[Path] = (),
        stdin: Path | None = None,
    ) -> ProcessResult:
        """Run one build or test command in the sandbox: it sees the toolchain, `readable` and
        `writable`, and may write only `writable`; `stdin` is a file it reads on standard input."""
        for folder in writable:
            # bubblewrap can only bind folders that exist.
            folder.mkdir(parents=True, exist_ok=True)
        spec = SandboxSpec(
            writable=tuple(dict.fromkeys(writable)),
            env=dict(env),
            network=self.manifest.sandbox.network,
            readable=tuple(dict.fromkeys([*self.tools, *readable])),
        )
        return run_process(
            argv, cwd=cwd, sandbox=self.sandbox, spec=spec, timeout_s=timeout_s, stdin=stdin
        )

    def program(
        self, tree: Tree, argv: Sequence[str], extra: Mapping[str, str] | None = None
    ) -> Program:
        """The built target: it sees its worktree, its build folder and the toolchain, all
        read-only. What a run may write is its private /tmp and HOME, which die with it, and
        its declared output files (see `speedproof.outputs`): nothing a later run can read.
        """
        return Program(
            side=tree.side,
            root=tree.root,
            argv=tuple(argv),
            env=self.env(extra),
            network=self.manifest.sandbox.network,
            readable=(*self.tools, tree.worktree, tree.out),
        )


class Builder(Protocol):
    def build(self, tree: Tree) -> BuildResult: ...

    def versions(self) -> dict[str, str]: ...


class TestRunner(Protocol):
    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun: ...

    def versions(self) -> dict[str, str]: ...


class Toolchain(Protocol):
    """Builds a tree into a `Program` and runs its tests; `only` re-runs selected test ids."""

    @property
    def manifest(self) -> Manifest: ...

    def build(self, tree: Tree) -> BuildResult: ...

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun: ...

    def versions(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class TargetToolchain:
    """A builder and a test runner behind one face; what `toolchain_for` returns."""

    manifest: Manifest
    context: Context
    builder: Builder
    tests: TestRunner

    def build(self, tree: Tree) -> BuildResult:
        return self.builder.build(tree.checked())

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        if only is not None and not only:
            return TestRun(outcomes={}, ran=True, log="", duration_s=0.0, command=())
        return self.tests.run_tests(tree.checked(), only)

    def versions(self) -> dict[str, str]:
        found = {**self.builder.versions(), **self.tests.versions()}
        found["sandbox"] = self.context.sandbox.name
        return dict(sorted(found.items()))


def probe(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> str:
    """Run one of our own tools outside the sandbox (no target code) and return its stdout."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            env=None if env is None else dict(env),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfrastructureError(f"`{' '.join(argv)}` could not run: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        raise InfrastructureError(f"`{' '.join(argv)}` failed: {said}")
    return done.stdout.decode(errors="replace").strip()


INTERPRETER_FIX = "create the venv or set [target] interpreter"


def interpreter_named(written: str, path: str) -> str:
    """`interpreter '.venv/bin/python' (resolved to /abs/.venv/bin/python)`, for messages."""
    shown = f"interpreter {written!r}"
    return shown if written == path else f"{shown} (resolved to {path})"


def _named_path(named: str, written: str) -> str:
    """The executable an absolute (or, before anchoring, relative) path names, checked."""
    shown = interpreter_named(written, named)
    if not os.path.isabs(named):
        raise InfrastructureError(
            f"{shown} is relative and no manifest file anchors it: give an absolute path"
        )
    if os.path.islink(named) and not os.path.exists(named):
        raise InfrastructureError(
            f"{shown} is a link to nothing ({os.path.realpath(named)} is gone: the Python the "
            f"venv was made from was removed or moved); recreate the venv or set [target] "
            "interpreter"
        )
    if not os.path.exists(named):
        raise InfrastructureError(f"{shown} does not exist; {INTERPRETER_FIX}")
    if not os.path.isfile(named) or not os.access(named, os.X_OK):
        raise InfrastructureError(
            f"{shown} is not an executable file; name the venv's bin/python or set [target] "
            "interpreter"
        )
    return named


def resolve_interpreter(manifest: Manifest) -> tuple[Path, str]:
    """The Python that builds and tests: the manifest's `interpreter`, else our own.

    Returns the path (symlinks kept: a venv's `bin/python` is what makes it that venv) and where
    the choice came from, for the ledger. A path the manifest names that is missing, dangling or
    not executable raises InfrastructureError saying which and how to fix it.
    """
    target = manifest.target
    named, written = target.interpreter, target.interpreter_written
    if named is None or written is None:
        if not sys.executable:
            raise InfrastructureError("cannot tell which Python is running speedproof")
        return Path(sys.executable), "speedproof's own interpreter"
    if "/" in named:
        return Path(_named_path(named, written)), "the manifest's interpreter"
    found = shutil.which(named)
    if found is None:
        raise InfrastructureError(
            f"interpreter {named!r} is not on PATH; install it, give its path (absolute or "
            "relative to the manifest) or set [target] interpreter"
        )
    return Path(found), "the manifest's interpreter"


def safe_name(name: str) -> str:
    """A target name usable as a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip(".") or "target"
