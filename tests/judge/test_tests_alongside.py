"""The test gate's runs beside the untimed stages after them, and a verdict as if in order."""

from __future__ import annotations

import threading

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import TestRun
from speedproof.judge.early_end import Ended, failed
from speedproof.judge.tests_alongside import TestRuns, alongside

_RUN = TestRun(outcomes={}, ran=True, log="", duration_s=0.0, command=("go", "test"))
RUNS = TestRuns(_RUN, _RUN, 0.0)


def test_the_test_runs_go_on_while_the_stages_after_them_run() -> None:
    body_started = threading.Event()
    seen: list[bool] = []

    def run() -> TestRuns:
        # Only a body running beside this thread can set the event.
        seen.append(body_started.wait(timeout=10))
        return RUNS

    with alongside(run, lambda runs: None, beside=True) as tests:
        body_started.set()
        tests.join()
    assert seen == [True]


def test_without_a_sandbox_the_tests_are_judged_before_the_stages_after_them_start() -> None:
    order: list[str] = []
    with alongside(lambda: RUNS, lambda runs: order.append("tests"), beside=False):
        order.append("behaviour")
    assert order == ["tests", "behaviour"]


def test_a_failing_test_outranks_the_later_gate_that_ended_the_candidate() -> None:
    def finish(runs: TestRuns) -> None:
        raise Ended(failed("TestParse newly fails"))

    with pytest.raises(Ended) as ended, alongside(lambda: RUNS, finish, beside=True):
        raise Ended(failed("stdout differs"))
    assert ended.value.evidence.failure_summary == ("TestParse newly fails",)


def test_a_later_gate_ends_the_candidate_once_the_tests_are_judged_and_pass() -> None:
    judged: list[TestRuns] = []
    judging = alongside(lambda: RUNS, judged.append, beside=True)
    with pytest.raises(Ended) as ended, judging:
        raise Ended(failed("stdout differs"))
    assert ended.value.evidence.failure_summary == ("stdout differs",)
    assert judged == [RUNS]


def test_the_runs_are_judged_once_however_often_they_are_joined() -> None:
    judged: list[TestRuns] = []
    with alongside(lambda: RUNS, judged.append, beside=True) as tests:
        tests.join()
        tests.join()
    assert judged == [RUNS]


def test_a_test_run_that_cannot_anchor_the_gate_raises_its_error_at_the_join() -> None:
    def run() -> TestRuns:
        raise InfrastructureError("the baseline's tests did not run")

    judging = alongside(run, lambda runs: None, beside=True)
    with pytest.raises(InfrastructureError, match="did not run"), judging as tests:
        tests.join()
