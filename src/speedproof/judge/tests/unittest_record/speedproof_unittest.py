"""speedproof's own unittest runner: `python -m unittest`, with each outcome recorded as it ends.

It runs inside the target's interpreter (any Python since 3.7), so it imports only the standard
library. speedproof's bootstrap (`judge/tests/python_tests.py`) imports it before any folder of the
tree is on sys.path and calls `main(spec)`, which

* opens the record (the pipe the judge reads, `judge/tests/record_channel.py`) and notes every
  function and class of unittest's machinery and of this module, before any code under test is
  imported;
* reads the manifest's arguments exactly as `python -m unittest` does (`unittest.TestProgram`),
  which discovers or loads the tests;
* runs them with `RecordingRunner`, whose result appends one JSON line per outcome as each test
  ends (the format of `judge/tests/run_record.py`), before unittest's own bookkeeping sees it;
* and records the exit status it is about to return, with the functions and classes that are no
  longer the ones it noted: code under test that patched unittest (or this runner) to turn
  failures into passes is named.

Ids are unittest's own (`tests.test_x.TestClass.test_name`). A module that fails to import, or is
skipped whole by a `SkipTest` raised as it imports, is one outcome under its dotted name
(`tests.test_x`), announced by a `module` event. A test that `setUpClass` or `setUpModule` kept
from running carries that fixture's error or skip, as pytest reports it; a `tearDownClass` or
`tearDownModule` error goes to the last test of its class or module that ran. A failing subtest
fails its test. Expected failures count as skipped and unexpected successes as failed, as pytest
counts them. The exit status is pytest's: 0 all passed, 1 some failed, 5 nothing ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
import types
import unittest
import unittest.suite
from collections.abc import Iterator
from typing import Any

# Python 3.8 on; imported now so that its classes are noted with the rest.
with contextlib.suppress(ImportError):
    import unittest.async_case

# One failing test's output, as speedproof keeps it (base.FAILURE_LIMIT).
MESSAGE_LIMIT = 4_000
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
# Where a test's outcome is decided: the package's names, and each of its modules' functions and
# classes (`unittest.signals` keeps run state in its globals, and decides no outcome).
_WATCHED = (
    "unittest",
    "unittest.case",
    "unittest.suite",
    "unittest.result",
    "unittest.runner",
    "unittest.loader",
    "unittest.main",
    "unittest.util",
    "unittest.async_case",
    __name__,
)
_CODE = (types.FunctionType, classmethod, staticmethod, property, type, types.ModuleType)
# `_ErrorHolder` descriptions: "setUpClass (tests.test_x.T)", "setUpModule (tests.test_x)".
_SET_UP = ("setUpClass", "setUpModule")


def _code_of(namespace: Any, prefix: str) -> dict[str, object]:
    return {
        f"{prefix}.{name}": value
        for name, value in list(vars(namespace).items())
        if isinstance(value, _CODE)
    }


def machinery() -> dict[str, object]:
    """Every function and class of the watched modules and of their classes, by dotted name, and
    the calls the record is written through."""
    found: dict[str, object] = {"os.write": os.write, "json.dumps": json.dumps}
    for name in _WATCHED:
        module = sys.modules.get(name)
        if module is None:
            continue
        found[f"sys.modules[{name!r}]"] = module
        found.update(_code_of(module, name))
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                found.update(_code_of(value, f"{name}.{value.__qualname__}"))
    return found


def _shadows(name: str, now: dict[str, object]) -> bool:
    """Whether a name added since the start overrides something inherited (`Class.run` added
    to a class that inherited `run`); a method of a new name changes no outcome."""
    owner, _, attribute = name.rpartition(".")
    cls = now.get(owner)
    return isinstance(cls, type) and any(attribute in vars(base) for base in cls.__mro__[1:])


def replaced(before: dict[str, object]) -> list[str]:
    """Names whose function or class is no longer the one noted in `before`."""
    now = machinery()
    changed = [name for name, value in before.items() if now.get(name) is not value]
    changed += [name for name in now if name not in before and _shadows(name, now)]
    return sorted(changed)


def _class_of(test: object) -> str:
    cls = type(test)
    return f"{cls.__module__}.{cls.__qualname__}"


def module_placeholder(test: object) -> str | None:
    """The module a loader placeholder stands for: `_FailedTest` (it failed to import) and
    `ModuleSkipped` (it raised SkipTest as it imported) are named after the module."""
    cls = type(test)
    if cls.__module__ == "unittest.loader" and cls.__name__ in ("_FailedTest", "ModuleSkipped"):
        return str(getattr(test, "_testMethodName", "") or "") or None
    return None


def leaves(suite: Any) -> Iterator[Any]:
    """The tests of a suite, however deeply nested; a lone test is its own."""
    if not isinstance(suite, unittest.suite.BaseTestSuite):
        yield suite
        return
    for test in suite:
        if isinstance(test, unittest.suite.BaseTestSuite):
            yield from leaves(test)
        else:
            yield test


def _test_id(test: Any) -> str:
    return module_placeholder(test) or str(test.id())


def _is_wanted(test: Any, wanted: frozenset[str]) -> bool:
    """A test by its id; a placeholder if a wanted test lies in its module."""
    module = module_placeholder(test)
    if module is None:
        return str(test.id()) in wanted
    return any(w.startswith(module + ".") for w in wanted)


def _keep_only(suite: unittest.suite.BaseTestSuite, wanted: frozenset[str]) -> None:
    """Drop every test not wanted, in place, keeping the suites' structure (and so their class
    and module fixtures)."""
    kept: list[Any] = []
    for test in suite:
        if isinstance(test, unittest.suite.BaseTestSuite):
            _keep_only(test, wanted)
            kept.append(test)
        elif _is_wanted(test, wanted):
            kept.append(test)
    suite._tests = kept


def _is_fixture(test: object) -> bool:
    """unittest's stand-in for a class or module fixture that failed (`suite._ErrorHolder`)."""
    cls = type(test)
    return cls.__module__ == "unittest.suite" and cls.__name__ == "_ErrorHolder"


def _in_unittest(frames: Any) -> bool:
    # unittest's modules mark themselves with a global `__unittest`, for this very purpose.
    return "__unittest" in frames.tb_frame.f_globals


def _text(err: Any) -> str:
    """A failure's traceback as unittest prints it: without unittest's own frames before the
    test's (the runner calling it) or after them (an assertion method raising)."""
    kind, value, frames = err
    while frames is not None and _in_unittest(frames):
        frames = frames.tb_next
    length, here = 0, frames
    while here is not None and not _in_unittest(here):
        length, here = length + 1, here.tb_next
    shown = traceback.format_exception(kind, value, frames, limit=length or None)
    return "".join(shown)[-MESSAGE_LIMIT:]


class Recorder:
    """Appends each event to the record through a descriptor of its own, opened now."""

    def __init__(self, path: str, only: list[str] | None) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        self.only = None if only is None else frozenset(only)
        self.before = machinery()
        self.outcomes: dict[str, str] = {}
        self.started: set[str] = set()
        # Class or module name -> (outcome, message) of the set-up fixture that failed there.
        self.fixtures: dict[str, tuple[str, str]] = {}
        # Class or module name -> the last test that started in it.
        self.last: dict[str, str] = {}
        # (id, class, module) of every test collected, in order.
        self.tests: list[tuple[str, str, str]] = []
        self.status = 5

    def write(self, **event: Any) -> None:
        data = (json.dumps(event) + "\n").encode()
        while data:  # a pipe may take a long line in parts, if a signal interrupts
            data = data[os.write(self._fd, data) :]

    def report(self, test_id: str, when: str, outcome: str, message: str = "") -> None:
        known = self.outcomes.get(test_id)
        if known is None or RANK[outcome] > RANK[known]:
            self.outcomes[test_id] = outcome
        self.write(
            event="report", id=test_id, when=when, outcome=outcome, message=message[-MESSAGE_LIMIT:]
        )

    def started_test(self, test: Any) -> None:
        test_id, cls = _test_id(test), _class_of(test)
        self.started.add(test_id)
        self.last[cls] = self.last[type(test).__module__] = test_id

    def fixture(self, holder: Any, outcome: str, message: str) -> None:
        """A class or module fixture's failure: set-ups to the tests they kept from running
        (settled at the end), tear-downs to the last test that ran there."""
        method, _, parent = str(holder.id()).partition(" (")
        parent = parent[:-1] if parent.endswith(")") else parent
        if method in _SET_UP:
            self.fixtures[parent] = (outcome, message)
            return
        self.report(self.last.get(parent, f"{parent}.{method}"), "teardown", outcome, message)

    def collect(self, suite: Any) -> None:
        if self.only is not None and isinstance(suite, unittest.suite.BaseTestSuite):
            _keep_only(suite, self.only)
        for test in leaves(suite):
            module = module_placeholder(test)
            if module is not None:
                self.write(event="module", id=module)
            else:
                self.tests.append((str(test.id()), _class_of(test), type(test).__module__))
        self.write(event="collected", count=len(self.tests))

    def finish(self) -> None:
        for test_id, cls, module in self.tests:
            kept_out = self.fixtures.get(cls) or self.fixtures.get(module)
            if test_id not in self.started and test_id not in self.outcomes and kept_out:
                self.report(test_id, "setup", *kept_out)
        bad = any(o in ("failed", "error") for o in self.outcomes.values())
        self.status = 1 if bad else 0 if self.outcomes else 5
        self.write(event="finished", exitstatus=self.status, replaced=replaced(self.before))


_RECORDER: list[Recorder] = []


def recorder() -> Recorder:
    return _RECORDER[0]


class RecordingResult(unittest.TextTestResult):
    """unittest's text result, with each outcome recorded before unittest's bookkeeping."""

    def startTest(self, test: unittest.TestCase) -> None:
        recorder().started_test(test)
        super().startTest(test)

    def addSuccess(self, test: unittest.TestCase) -> None:
        recorder().report(_test_id(test), "call", "passed")
        super().addSuccess(test)

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        recorder().report(_test_id(test), "call", "failed", _text(err))
        super().addFailure(test, err)

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        if _is_fixture(test):
            recorder().fixture(test, "error", _text(err))
        else:
            when = "collect" if module_placeholder(test) else "call"
            recorder().report(_test_id(test), when, "error", _text(err))
        super().addError(test, err)

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        if _is_fixture(test):
            recorder().fixture(test, "skipped", reason)
        else:
            when = "collect" if module_placeholder(test) else "call"
            recorder().report(_test_id(test), when, "skipped", reason)
        super().addSkip(test, reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        recorder().report(_test_id(test), "call", "skipped", "expected failure: " + _text(err))
        super().addExpectedFailure(test, err)

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        said = "unexpected success: marked expectedFailure, and passed"
        recorder().report(_test_id(test), "call", "failed", said)
        super().addUnexpectedSuccess(test)

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        if err is not None:
            failed = test.failureException is not None and issubclass(err[0], test.failureException)
            said = f"{subtest}: {_text(err)}"
            recorder().report(_test_id(test), "call", "failed" if failed else "error", said)
        super().addSubTest(test, subtest, err)


class RecordingRunner(unittest.TextTestRunner):
    """unittest's text runner over the recording result: notes what was collected first, and
    how the run ended last."""

    # typeshed types this as a callable of three arguments; Python 3.12 passes `durations` too.
    resultclass = RecordingResult  # type: ignore[assignment]

    def run(self, test: Any) -> unittest.TextTestResult[Any]:
        recorder().collect(test)
        result = super().run(test)
        recorder().finish()
        return result


def main(spec: dict[str, Any]) -> int:
    """`python -m unittest ARGS` through the recording runner; the exit status it recorded."""
    _RECORDER.append(Recorder(spec["record"], spec["only"]))
    argv = ["python -m unittest", *spec["args"]]
    unittest.main(module=None, argv=argv, testRunner=RecordingRunner, exit=False)
    return recorder().status
