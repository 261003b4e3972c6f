"""A unittest project judged for real: real git, real bubblewrap, speedproof's whole judge.

The project (`support.unittest_target`) is a package with a CLI and a `tests/` package of
`unittest.TestCase`s, one of which already fails on the baseline. Its manifest names
`runner = "unittest"` with `discover -s tests -p "test_*.py" -t .`. Each forgery below is what a
patch to the target's own code could do at run time, inside the test process.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.outcome import Outcome
from support.unittest_target import (
    BROKEN_ADD,
    FAST_PRIMES,
    FILES,
    IDS,
    KNOWN_BUG,
    NEGATIVE,
    SLOW_PRIMES,
    SMALL,
    gate_named,
    judge,
    patch,
    repository,
    text,
)

# Imported by a name built at run time: the guard refuses a plain `import unittest` in product
# code (docs/adr/0060), and these forgeries test the run-time defence behind it.
_UNITTEST = """
    import importlib

    harness = importlib.import_module("unit" + "test")
"""
# Every failure a test meets is reported to unittest's result as a success.
REPORTS_SUCCESS = text(
    _UNITTEST
    + """


    def _report_success(self, test, err=None):
        self.addSuccess(test)


    harness.TestResult.addFailure = _report_success
    harness.TestResult.addError = _report_success
    harness.TestResult.wasSuccessful = lambda self: True
    """
)
# No test body runs at all: each test is reported passed.
PASSES_EVERY_TEST = text(
    _UNITTEST
    + """


    def _pass(self, result=None):
        result.startTest(self)
        result.addSuccess(self)
        result.stopTest(self)


    harness.TestCase.run = _pass
    """
)
# At exit, speedproof's record (its path is in the process's own argv) is rewritten to say that
# every test passed, and the process leaves with the status that goes with it.
REWRITES_THE_RECORD = text(
    f"""
    import atexit
    import json
    import os

    IDS = {list(IDS)!r}


    def _forge():
        with open("/proc/self/cmdline", "rb") as handle:
            args = handle.read().split(b"\\0")
        spec = next(json.loads(arg) for arg in args if arg.startswith(b"{{"))
        lines = [{{"event": "collected", "count": len(IDS)}}]
        lines += [{{"event": "report", "id": i, "when": "call", "outcome": "passed"}} for i in IDS]
        lines.append({{"event": "finished", "exitstatus": 0, "replaced": []}})
        with open(spec["record"], "w") as record:
            record.write("".join(json.dumps(line) + "\\n" for line in lines))
        os._exit(0)


    atexit.register(_forge)
    """
)
# speedproof's own runner, found among the loaded modules, told that a failure is a success.
PATCHES_THE_RUNNER = text(
    """
    import sys

    _runner = sys.modules.get("speedproof_unittest")
    if _runner is not None:
        _runner.RecordingResult.addFailure = lambda self, test, err: self.addSuccess(test)
    """
)


def _judged_forgery(tmp_path: Path, prelude: str) -> Outcome:
    """The judge's outcome for a patch that breaks `add` (two tests fail) and runs `prelude`
    when `calc.ops` imports."""
    forged = patch("calc/ops.py", SLOW_PRIMES, prelude + "\n\n" + BROKEN_ADD)
    return judge(repository(tmp_path / "repo"), forged)


def _tampered(outcome: Outcome) -> str:
    """What the tests gate says was tampered with; the candidate must have been rejected."""
    assert outcome.verdict.verdict == "rejected", outcome.verdict.reasons
    gate = gate_named(outcome, "tests")
    said = [r for r in gate.reasons if r.startswith("test results tampered with")]
    assert not gate.passed and said, gate.reasons
    return said[0]


def test_a_patch_that_breaks_tests_is_rejected_naming_each_broken_test(tmp_path: Path) -> None:
    outcome = judge(repository(tmp_path / "repo"), patch("calc/ops.py", SLOW_PRIMES, BROKEN_ADD))

    assert outcome.verdict.verdict == "rejected"
    gate = gate_named(outcome, "tests")
    assert not gate.passed
    assert gate.reasons == (f"tests newly failing: {NEGATIVE}, {SMALL}",)


def test_a_real_speedup_is_accepted_though_the_baseline_already_fails_a_test(
    tmp_path: Path,
) -> None:
    outcome = judge(
        repository(tmp_path / "repo"), patch("calc/ops.py", SLOW_PRIMES, FAST_PRIMES), pairs=8
    )

    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    assert outcome.verdict.rests_on == "primes"
    gate = gate_named(outcome, "tests")
    assert gate.passed and gate.reasons == ()
    # The baseline's own failure is known to the gate, and checked across channels.
    assert gate.detail["baseline"].startswith("5 passed, 1 failed, 0 skipped, 0 error")
    assert any(line.startswith("cross-checked: 6 outcomes") for line in gate.detail["detail"])


def test_a_test_the_baseline_already_fails_is_not_charged_to_a_candidate_that_fails_it_too(
    tmp_path: Path,
) -> None:
    # `add` untouched, so `test_known_bug` still fails; the CLI now also talks on stderr, which
    # ends the judgement at the behaviour gate, after the tests and before any timing.
    main = FILES["calc/__main__.py"]
    chatty = main.replace(
        "print(count_primes", 'print("counting", file=sys.stderr)\nprint(count_primes'
    )

    outcome = judge(repository(tmp_path / "repo"), patch("calc/__main__.py", main, chatty))

    gate = gate_named(outcome, "tests")
    assert gate.passed, gate.reasons
    assert gate.detail["candidate"].startswith("5 passed, 1 failed")
    assert not any(KNOWN_BUG in line for line in gate.detail["detail"])
    assert not gate_named(outcome, "behaviour").passed


def test_a_patch_adding_a_sitecustomize_is_refused_before_anything_runs(tmp_path: Path) -> None:
    outcome = judge(repository(tmp_path / "repo"), patch("sitecustomize.py", "", "import os\n"))

    assert outcome.verdict.verdict == "rejected"
    assert [g.name for g in outcome.gates] == ["guard"]
    assert "'sitecustomize.py' is protected: Python start-up hook" in outcome.verdict.reasons[0]


def test_a_module_that_patches_unittests_result_to_report_success_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    outcome = _judged_forgery(tmp_path, REPORTS_SUCCESS)

    said = _tampered(outcome)
    assert "replaced the test machinery" in said
    assert "unittest.result.TestResult.addFailure" in said
    # speedproof's runner saw the failures before unittest's patched bookkeeping did.
    assert f"tests newly failing: {NEGATIVE}, {SMALL}" in gate_named(outcome, "tests").reasons


def test_a_module_that_makes_every_test_pass_without_running_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    said = _tampered(_judged_forgery(tmp_path, PASSES_EVERY_TEST))

    assert "unittest.case.TestCase.run" in said


def test_a_module_that_rewrites_the_record_at_exit_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    said = _tampered(_judged_forgery(tmp_path, REWRITES_THE_RECORD))

    # The record is a pipe the judge had already read: the forged lines came after the end.
    assert "not as speedproof writes it" in said
    assert "after the run finished" in said


def test_a_module_that_patches_speedproofs_own_runner_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    said = _tampered(_judged_forgery(tmp_path, PATCHES_THE_RUNNER))

    assert "speedproof_unittest.RecordingResult.addFailure" in said
