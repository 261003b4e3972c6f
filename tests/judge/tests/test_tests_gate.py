"""The baseline-relative test gate's rules, on test runs written out by hand.

The re-run callables here replay scripted runs in order: they are the gate's input (what a real
re-run would have answered), not a stand-in for the gate. `test_tests_gate_real.py` runs the same
rules over real `go test` and pytest runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import Outcome, TestRun
from speedproof.judge.tests.gate import MAX_RECHECK, TestGateResult, judge_tests


def run(outcomes: dict[str, Outcome], *, ran: bool = True, note: str = "") -> TestRun:
    return TestRun(outcomes=outcomes, ran=ran, log="", duration_s=0.1, command=("t",), note=note)


class Replay:
    """Answers re-run requests with the next scripted run, and remembers what was asked."""

    def __init__(self, *runs: dict[str, Outcome]) -> None:
        self.runs = list(runs)
        self.asked: list[list[str]] = []

    def __call__(self, ids: list[str]) -> TestRun:
        self.asked.append(list(ids))
        return run(self.runs.pop(0))


BASELINE: dict[str, Outcome] = {
    "a": "passed",
    "b": "passed",
    "c": "passed",
    "d": "passed",
    "known": "failed",
    "skip": "skipped",
}


def judge(
    candidate: dict[str, Outcome] | TestRun,
    *,
    baseline: dict[str, Outcome] | None = None,
    retries: int = 0,
    base_reruns: Sequence[dict[str, Outcome]] = (),
    cand_reruns: Sequence[dict[str, Outcome]] = (),
) -> tuple[TestGateResult, Replay, Replay]:
    on_base, on_cand = Replay(*base_reruns), Replay(*cand_reruns)
    result = judge_tests(
        run(BASELINE if baseline is None else baseline),
        candidate if isinstance(candidate, TestRun) else run(candidate),
        retries=retries,
        rerun_baseline=on_base,
        rerun_candidate=on_cand,
    )
    return result, on_base, on_cand


def test_a_candidate_that_keeps_every_baseline_pass_passes() -> None:
    result, _, _ = judge(dict(BASELINE))
    assert result.passed and result.reasons() == ()


def test_a_baseline_pass_that_fails_is_skipped_or_does_not_run_rejects_by_name() -> None:
    result, _, _ = judge(
        {"a": "failed", "b": "error", "c": "skipped", "known": "failed", "skip": "skipped"}
    )

    assert not result.passed
    assert result.newly_failing == ("a", "b")
    assert result.newly_skipped == ("c",)
    assert result.not_run == ("d",)
    assert result.reasons() == (
        "tests newly failing: a, b",
        "tests newly skipped: c",
        "tests that passed on the baseline are missing from the candidate's full run: d",
    )


def test_tests_that_already_failed_or_skipped_on_the_baseline_are_not_charged() -> None:
    candidate: dict[str, Outcome] = {**BASELINE, "known": "error"}
    del candidate["skip"]
    result, _, _ = judge(candidate)
    assert result.passed


def test_a_failure_the_baseline_does_not_have_at_all_rejects() -> None:
    result, _, _ = judge({**BASELINE, "pkg/[build failed]": "error"})
    assert result.newly_failing == ("pkg/[build failed]",)


def test_a_failure_the_baseline_also_shows_on_a_re_run_is_flaky_and_not_charged() -> None:
    result, on_base, on_cand = judge(
        {**BASELINE, "a": "failed"},
        retries=2,
        base_reruns=[{"a": "failed"}],
        cand_reruns=[{"a": "failed"}],
    )

    assert result.passed
    assert result.recovered_flaky == ("a",)
    assert on_base.asked == [["a"]] and on_cand.asked == [["a"]]
    assert any("flaky" in line for line in result.detail)


def test_a_candidate_failure_stands_when_only_the_candidate_passes_a_re_run() -> None:
    # Baseline 3 of 3, candidate 2 of 3: what a race the patch introduced looks like.
    result, on_base, _ = judge(
        {**BASELINE, "a": "failed"},
        retries=2,
        base_reruns=[{"a": "passed"}, {"a": "passed"}],
        cand_reruns=[{"a": "passed"}, {"a": "passed"}],
    )

    assert not result.passed and result.newly_failing == ("a",)
    assert len(on_base.asked) == 2
    assert (
        "a: passed on the baseline, failed on the candidate (re-runs: the baseline failed it "
        "0 of 2, the candidate passed it 2 of 2)" in result.detail
    )


def test_a_test_missing_from_the_full_run_is_charged_and_never_re_run() -> None:
    # A re-run that would pass it is never asked: code can tell a narrower run from a full one.
    candidate = {k: v for k, v in BASELINE.items() if k != "d"}
    result, on_base, on_cand = judge(
        candidate, retries=2, base_reruns=[{"d": "passed"}], cand_reruns=[{"d": "passed"}]
    )
    assert not result.passed and result.not_run == ("d",) and result.recovered_flaky == ()
    assert on_base.asked == [] and on_cand.asked == []
    assert result.reasons() == (
        "tests that passed on the baseline are missing from the candidate's full run: d",
    )


def test_a_missing_test_beside_a_flaky_failure_is_still_charged() -> None:
    candidate = {k: v for k, v in BASELINE.items() if k != "d"}
    result, on_base, _ = judge(
        {**candidate, "a": "failed"},
        retries=1,
        base_reruns=[{"a": "failed"}],
        cand_reruns=[{"a": "failed"}],
    )
    assert result.recovered_flaky == ("a",) and result.not_run == ("d",)
    assert on_base.asked == [["a"]]


def test_skips_are_decided_by_code_and_not_re_checked() -> None:
    result, on_base, _ = judge({**BASELINE, "a": "skipped"}, retries=2)
    assert result.newly_skipped == ("a",) and on_base.asked == []


def test_no_re_checks_when_retries_are_zero() -> None:
    result, on_base, _ = judge({**BASELINE, "a": "failed"}, retries=0)
    assert result.newly_failing == ("a",) and on_base.asked == []
    assert "no re-checks: [tests] flaky_retries = 0" in result.detail


def test_no_re_checks_when_the_candidate_run_did_not_complete() -> None:
    result, on_base, _ = judge(run({}, ran=False, note="timed out"), retries=2)
    assert result.not_run == ("a", "b", "c", "d") and on_base.asked == []
    assert "the candidate's test run did not complete: timed out" in result.detail


def test_no_re_checks_when_too_many_tests_broke_to_be_bad_luck() -> None:
    many: dict[str, Outcome] = {f"t{i}": "passed" for i in range(MAX_RECHECK + 1)}
    result, on_base, _ = judge(dict.fromkeys(many, "failed"), baseline=many, retries=2)
    assert len(result.newly_failing) == MAX_RECHECK + 1 and on_base.asked == []


def test_a_baseline_re_run_that_does_not_run_is_an_infrastructure_error() -> None:
    def broken(ids: list[str]) -> TestRun:
        return run({}, ran=False, note="sandbox gone")

    with pytest.raises(InfrastructureError, match="sandbox gone"):
        judge_tests(
            run(BASELINE),
            run({**BASELINE, "a": "failed"}),
            retries=1,
            rerun_baseline=broken,
            rerun_candidate=broken,
        )


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        (run({}, ran=False, note="no readable JUnit report"), "never ran: no readable JUnit"),
        (run({}), "never ran: `t` ran no test"),
        (run({"x": "failed", "y": "skipped"}), "passes none of its 2 tests"),
    ],
)
def test_a_baseline_whose_tests_never_ran_raises(baseline: TestRun, message: str) -> None:
    with pytest.raises(InfrastructureError, match=message):
        judge_tests(baseline, run({}), retries=0, rerun_baseline=Replay(), rerun_candidate=Replay())


def test_a_test_run_survives_its_json_form_and_a_bad_outcome_is_refused() -> None:
    original = TestRun(
        outcomes={"a": "passed", "b": "error"},
        ran=True,
        log="log",
        duration_s=1.5,
        command=("go", "test"),
        note="n",
        failures={"b": "boom"},
    )
    assert TestRun.from_json(original.to_json()) == original
    with pytest.raises(ValueError, match="outcomes"):
        TestRun.from_json({**original.to_json(), "outcomes": {"a": "fine"}})


def test_a_candidate_whose_results_disagree_is_rejected_as_tampered_and_not_re_checked() -> None:
    forged = TestRun(
        outcomes=dict(BASELINE),
        ran=True,
        log="",
        duration_s=0.1,
        command=("t",),
        collected=6,
        tampered=("the JUnit report disagrees with what pytest reported: a (failed)",),
    )

    result, on_base, on_cand = judge(forged, retries=2)

    assert not result.passed
    assert result.reasons() == (
        "test results tampered with: the JUnit report disagrees with what pytest reported: "
        "a (failed)",
    )
    assert on_base.asked == on_cand.asked == []


def test_a_baseline_whose_results_disagree_is_an_infrastructure_error() -> None:
    base = TestRun(
        outcomes=dict(BASELINE),
        ran=True,
        log="",
        duration_s=0.1,
        command=("t",),
        tampered=("exit status 0 with 1 failing: known",),
    )
    with pytest.raises(InfrastructureError, match="the baseline's test results disagree"):
        judge_tests(
            base, run(BASELINE), retries=0, rerun_baseline=Replay(), rerun_candidate=Replay()
        )


def counted(outcomes: dict[str, Outcome], collected: int) -> TestRun:
    return TestRun(
        outcomes=outcomes,
        ran=True,
        log="",
        duration_s=0.1,
        command=("t",),
        collected=collected,
        checked="plugin and report agree",
    )


def test_tests_lost_without_a_collection_error_are_tampering_and_a_broken_module_is_not() -> None:
    base = counted({"m.py::a": "passed", "m.py::b": "passed", "n.py::c": "passed"}, 3)
    hidden = counted({"m.py::a": "passed", "n.py::c": "passed"}, 2)
    broken = counted({"m.py": "error", "n.py::c": "passed"}, 1)
    replay = {"rerun_baseline": Replay(), "rerun_candidate": Replay()}

    lost = judge_tests(base, hidden, retries=0, **replay)
    assert lost.tampered == (
        "1 tests that passed on the baseline are missing from the candidate's run though their "
        "modules were collected: m.py::b",
    )

    honest = judge_tests(base, broken, retries=0, **replay)
    assert honest.tampered == ()
    assert honest.newly_failing == ("m.py",) and honest.not_run == ("m.py::a", "m.py::b")


def test_a_candidate_that_collects_under_half_the_baseline_is_tampering() -> None:
    base = counted({f"m.py::t{i}": "passed" for i in range(2)}, 10)
    few = counted({f"m.py::t{i}": "passed" for i in range(2)}, 4)

    result = judge_tests(base, few, retries=0, rerun_baseline=Replay(), rerun_candidate=Replay())

    assert result.tampered == ("the candidate collected 4 tests where the baseline collected 10",)


def test_the_detail_says_what_was_cross_checked_when_the_runner_could() -> None:
    base = counted({"m.py::a": "passed"}, 1)

    result = judge_tests(
        base,
        counted({"m.py::a": "passed"}, 1),
        retries=0,
        rerun_baseline=Replay(),
        rerun_candidate=Replay(),
    )

    assert result.passed
    assert result.detail == (
        "cross-checked: plugin and report agree (the baseline collected 1); every test the "
        "baseline passed is present by name or in a module that failed to collect or was skipped",
    )
    assert judge(dict(BASELINE))[0].detail == ()


def _with_harness(outcomes: dict[str, Outcome], *harness: str) -> TestRun:
    return TestRun(
        outcomes=outcomes, ran=True, log="", duration_s=0.1, command=("t",), harness=harness
    )


HOOK = "hook pytest_runtest_makereport: _pytest.runner.pytest_runtest_makereport (plain)"


def test_a_hook_implementation_the_baseline_lacks_is_named_as_altered_machinery() -> None:
    extra = "hook pytest_runtest_makereport: calc.tidy.pytest_runtest_makereport (hookwrapper)"
    result = judge_tests(
        _with_harness(BASELINE, HOOK),
        _with_harness(BASELINE, HOOK, extra),
        retries=0,
        rerun_baseline=Replay(),
        rerun_candidate=Replay(),
    )

    assert not result.passed
    assert result.reasons() == (
        f"test machinery altered: the baseline's run does not have {extra}",
    )


def test_a_program_the_baseline_never_started_is_named_by_package() -> None:
    result = judge_tests(
        _with_harness(BASELINE, "process m/p: /bin/true"),
        _with_harness(BASELINE, "process m/p: /bin/true", "process m/p: /bin/sh"),
        retries=0,
        rerun_baseline=Replay(),
        rerun_candidate=Replay(),
    )

    assert result.reasons() == (
        "the test binary started a process the baseline's does not: m/p: /bin/sh",
    )


def test_a_re_run_whose_harness_the_baseline_lacks_forgives_nothing() -> None:
    on_base = Replay({"a": "passed"})

    def on_cand(ids: list[str]) -> TestRun:
        return _with_harness({"a": "passed"}, "process m/p: its copy")

    result = judge_tests(
        _with_harness(BASELINE),
        _with_harness({**BASELINE, "a": "failed"}),
        retries=1,
        rerun_baseline=on_base,
        rerun_candidate=on_cand,
    )

    assert not result.passed and result.newly_failing == ("a",)
    assert result.reasons()[0] == (
        "the test binary started a process the baseline's does not: m/p: its copy (on a re-run)"
    )
