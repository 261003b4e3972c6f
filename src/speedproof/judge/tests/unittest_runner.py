"""`[tests] runner = "unittest"`: the target's standard-library unittest suite, for the test gate.

The suite runs as `python -m unittest ARGS` would (the manifest's `args`, untouched: `discover -s
tests -p "test_*.py" -t .`, test names, `-k`, none at all), but through speedproof's own runner
(`unittest_record/speedproof_unittest.py`), started the way pytest is (`python_tests`: `python -s`,
no PYTHONPATH, the runner imported before any folder of the tree is on sys.path). The runner
writes each outcome, keyed by unittest's test id (`tests.test_x.TestClass.test_name`), to the
pipe the judge reads as it is written (`record_channel`), and the record is checked against the
process's exit status and the list of unittest's functions that code under test replaced
(`run_record`); the gate then checks the collected count against the baseline's and every test
the baseline passed by name, as it does for pytest (docs/adr/0033). unittest writes no report of
its own to compare with, so the record stands alone where pytest's also meets a JUnit report.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import Context, TestRun, Tree
from speedproof.judge.build.python import PythonTool, source_roots
from speedproof.judge.tests.python_tests import recorded_test_run
from speedproof.judge.tests.run_record import Record, Recorded

RUNNER_FOLDER = Path(__file__).resolve().parent / "unittest_record"
RUNNER_MODULE = "speedproof_unittest"
# The runner's syntax (`from __future__ import annotations`) and unittest's `-k` are 3.7's.
OLDEST_PYTHON = (3, 7)


@functools.cache
def runner_digest() -> str:
    """Which runner recorded a run: a cached baseline run by another one is not reused."""
    source = (RUNNER_FOLDER / f"{RUNNER_MODULE}.py").read_bytes()
    return hashlib.sha256(source).hexdigest()[:16]


def _record_alone(record: Record) -> tuple[list[str], str]:
    """What the record was checked against besides the exit status: unittest's own functions,
    noted before any code under test was imported (their replacement is a problem of the record
    itself, `run_record.status_problems`)."""
    said = (
        f"{len(record.outcomes)} outcomes recorded by speedproof's unittest runner as each test "
        "ended, with none of unittest's or the runner's functions replaced"
    )
    return [], said


def _kept(read: Recorded, only: Sequence[str] | None) -> Recorded:
    """A re-run's outcomes for the ids it asked for and the modules holding them."""
    if only is None:
        return read
    wanted = set(only)

    def asked(test_id: str) -> bool:
        if test_id in wanted:
            return True
        return test_id in read.modules and any(w.startswith(test_id + ".") for w in wanted)

    outcomes = {i: o for i, o in read.outcomes.items() if asked(i)}
    failures = {i: m for i, m in read.failures.items() if i in outcomes}
    return replace(read, outcomes=outcomes, failures=failures)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


# Run by the target interpreter (-I: nothing of the tree is importable): its own unittest's
# argument parsers read the manifest's args as `python -m unittest ARGS` would, and nothing more
# (no test is loaded, so no code under test runs outside the sandbox).
_ARGS_PROBE = """\
import json, sys
from unittest.main import TestProgram
args = json.loads(sys.argv[1])
p = TestProgram.__new__(TestProgram)
p.progName, p.module, p.verbosity = "python -m unittest", None, 1
p.failfast = p.catchbreak = p.buffer = p.warnings = p.testNamePatterns = None
p.tb_locals, p.durations = False, None
p.start, p.pattern, p.top, p.tests = ".", "test*.py", None, []
p._initArgParsers()
discover = bool(args) and args[0].lower() == "discover"
if discover:
    p._discovery_parser.parse_args(args[1:], p)
else:
    p._main_parser.parse_args(args, p)
print(json.dumps({"discover": discover or not p.tests, "start": p.start,
                  "pattern": p.pattern, "top": p.top, "names": list(p.tests or [])}))
"""
# Reading arguments is instant; 60 s covers a cold disk, as the version probes do.
_ARGS_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class UnittestArgs:
    """What `python -m unittest ARGS` does with its arguments, as the interpreter reads them:
    discover from `start` (test files matching `pattern`, importable from `top`), or load
    `names`."""

    discover: bool
    start: str
    pattern: str
    top: str | None
    names: tuple[str, ...]


def read_unittest_args(interpreter: Path, args: Sequence[str]) -> UnittestArgs:
    """The manifest's args read by the target interpreter's own unittest; ValueError with
    unittest's words when it refuses them, InfrastructureError when the interpreter cannot run."""
    argv = [str(interpreter), "-I", "-c", _ARGS_PROBE, json.dumps(list(args))]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_ARGS_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfrastructureError(
            f"{interpreter} could not read unittest's arguments: {exc}"
        ) from exc
    said = [line for line in done.stderr.splitlines() if line.strip()]
    if done.returncode != 0:
        raise ValueError(said[-1] if said else f"exit {done.returncode}")
    try:
        data = json.loads(done.stdout.splitlines()[-1])
    except (ValueError, IndexError) as exc:
        # `-h` prints the help and leaves with status 0.
        raise ValueError("the arguments print unittest's help instead of running tests") from exc
    return UnittestArgs(
        discover=bool(data["discover"]),
        start=str(data["start"]),
        pattern=str(data["pattern"]),
        top=None if data["top"] is None else str(data["top"]),
        names=tuple(str(n) for n in data["names"]),
    )


@dataclass(frozen=True)
class UnittestTests:
    context: Context
    tool: PythonTool

    def versions(self) -> dict[str, str]:
        # unittest is the interpreter's own: its version is the Python version already listed.
        return {**self.tool.versions(), "unittest_runner": runner_digest()}

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        if _version(self.tool.version) < OLDEST_PYTHON:
            raise InfrastructureError(
                f"the unittest runner needs Python {'.'.join(map(str, OLDEST_PYTHON))} or newer; "
                f"{self.tool.interpreter} is Python {self.tool.version}: set [target] interpreter"
            )
        spec = {
            "folder": str(RUNNER_FOLDER),
            "runner": RUNNER_MODULE,
            # Test ids as speedproof's runner recorded them: the tests a re-run keeps.
            "only": None if only is None else list(only),
            "args": list(self.context.manifest.tests.args),
        }
        return recorded_test_run(
            self.context,
            tree,
            self.tool.interpreter,
            source_roots(self.context.manifest, tree),
            spec,
            runner="unittest",
            cross_check=_record_alone,
            kept=lambda read: _kept(read, only),
            names_modules=True,
        )
