"""Exit and escalation conditions, decided from a real ledger the way a campaign reads it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from speedproof.campaign import exits
from speedproof.campaign.options import Limits, OptionsError, parse_duration
from speedproof.campaign.state import CampaignState, Redactor, load_state
from speedproof.judge.policy.evidence import Comparison, PolicyRules
from speedproof.ledger import Ledger, RoleCall

CAMPAIGN = "20250101-000000-abcdef"
RULES = PolicyRules(guardrails=("cpu", "memory", "success"), limits=(("success", 1.0),))
NOW = datetime(2025, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    book = Ledger.in_folder(tmp_path)
    book.start_campaign(CAMPAIGN, target="t", repo=tmp_path, base_rev="b0", options={})
    book.add_event(CAMPAIGN, "start", {})
    return book


def reading(
    metric: str,
    delta: float,
    *,
    workload: str = "w",
    tier: str = "representative",
    sig: bool = True,
    lower: bool = True,
) -> Comparison:
    return Comparison(
        workload=workload,
        metric=metric,
        tier=tier,
        n_baseline=10,
        n_candidate=10,
        baseline_mean=1.0,
        candidate_mean=1.0 + delta / 100,
        delta_pct=delta,
        ci_low_pct=delta - 1,
        ci_high_pct=delta + 1,
        p_value=0.001 if sig else 0.5,
        welch_t=None,
        p_welch=None,
        p_mannwhitney=None,
        significant=sig,
        supported=sig,
        lower_is_better=lower,
    )


def candidate(
    ledger: Ledger,
    verdict: str | None,
    *,
    function: str = "f",
    diff: str = "a diff",
    sha: str | None = None,
    invalid: bool = False,
    gates: tuple[tuple[str, bool, list[str]], ...] = (),
    comparisons: tuple[Comparison, ...] = (),
    review: str | None = None,
    finished: bool = True,
    base: str = "b0",
    rejudge_of: int | None = None,
) -> int:
    facts: dict[str, Any] = {"rejection": "answer-not-json: x"} if invalid else {}
    cid = ledger.start_candidate(
        origin="campaign",
        campaign=CAMPAIGN,
        target="t",
        repo=Path("/r"),
        base_rev=base,
        patch_sha256=sha or f"sha-{diff}",
        diff=diff,
        sandbox="bwrap",
        facts=facts,
    )
    body = {
        "function": function,
        "hypothesis": "h",
        "rule": None,
        "invalid": invalid,
        "review": None if review is None else {"recommendation": review},
        "rejudge_of": rejudge_of,
    }
    ledger.add_event(CAMPAIGN, "candidate", body, candidate_id=cid)
    for name, passed, reasons in gates:
        ledger.add_gate(cid, name, passed, 0.1, {"reasons": reasons})
    ledger.add_comparisons(cid, comparisons)
    if finished:
        ledger.finish(cid, verdict=verdict, reasons=["why"], rests_on=None, lane=None, timings={})
    return cid


def state(ledger: Ledger, rules: PolicyRules = RULES, now: datetime = NOW) -> CampaignState:
    return load_state(ledger, CAMPAIGN, rules, now=now)


def test_durations_read_like_30m_2h_90s_and_1h30m() -> None:
    assert parse_duration("30m") == 1800
    assert parse_duration("2h") == 7200
    assert parse_duration("90s") == 90
    assert parse_duration("1h30m") == 5400
    assert parse_duration("45") == 45
    for bad in ("soon", "30 minutes", "0m", "-5", "3d"):
        with pytest.raises(OptionsError):
            parse_duration(bad)


def test_limits_out_of_range_are_named_errors() -> None:
    with pytest.raises(OptionsError, match="--max-candidates"):
        Limits(max_candidates=0)
    with pytest.raises(OptionsError, match="--target-pct"):
        Limits(target_pct=150)
    assert Limits().overlay({"max_failures": 2, "max_tokens": None}).max_failures == 2


def test_five_candidates_in_a_row_without_an_accept_end_the_campaign(ledger: Ledger) -> None:
    for index, verdict in enumerate(("rejected", "inconclusive", "rejected", "inconclusive")):
        candidate(ledger, verdict, diff=str(index))
    assert exits.check(state(ledger), Limits()) is None
    candidate(ledger, None, invalid=True, diff="")
    found = exits.check(state(ledger), Limits())
    assert found is not None and found.condition == exits.CONSECUTIVE_FAILURES
    assert "5 candidates in a row" in found.message


def test_an_accept_ends_the_run_of_failures(ledger: Ledger) -> None:
    candidate(ledger, "rejected", diff="1")
    candidate(ledger, "accepted", diff="2")
    candidate(ledger, "rejected", diff="3")
    assert exits.check(state(ledger), Limits(max_failures=2)) is None
    candidate(ledger, "inconclusive", diff="4")
    found = exits.check(state(ledger), Limits(max_failures=2))
    assert found is not None and found.condition == exits.CONSECUTIVE_FAILURES


def test_two_guardrail_rejections_in_a_row_are_a_protected_metric_regression(
    ledger: Ledger,
) -> None:
    success_lost = (reading("wall", -20), reading("success", -5, lower=False))
    # A primary-metric regression is not a protected metric regressing.
    candidate(ledger, "rejected", diff="1", comparisons=(reading("wall", 10),))
    candidate(ledger, "rejected", diff="2", comparisons=success_lost)
    assert exits.check(state(ledger), Limits()) is None
    candidate(ledger, "rejected", diff="3", comparisons=(reading("cpu", 9),))
    found = exits.check(state(ledger), Limits())
    assert found is not None and found.condition == exits.PROTECTED_METRIC
    assert "success on workload w" in found.message and "cpu on workload w" in found.message


def test_a_guardrail_reading_that_is_not_significant_or_on_a_holdout_does_not_count(
    ledger: Ledger,
) -> None:
    candidate(ledger, "rejected", diff="1", comparisons=(reading("cpu", 9, sig=False),))
    candidate(ledger, "rejected", diff="2", comparisons=(reading("cpu", 9, tier="holdout"),))
    assert exits.check(state(ledger), Limits()) is None


def test_two_guard_blocks_on_protected_paths_escalate(ledger: Ledger) -> None:
    blocked = (("guard", False, ["protected-path: tests/test_core.py is a test file"]),)
    candidate(ledger, "rejected", diff="1", gates=blocked)
    candidate(ledger, "rejected", diff="2", gates=(("guard", False, ["binary: x.bin"]),))
    assert exits.check(state(ledger), Limits()) is None
    candidate(ledger, "rejected", diff="3", gates=blocked)
    found = exits.check(state(ledger), Limits())
    assert found is not None and found.escalation
    assert found.condition == exits.EVALUATOR_CHANGE


def test_the_same_tests_failing_twice_with_no_objection_escalate(ledger: Ledger) -> None:
    failing = (("tests", False, ["tests newly failing: tests/test_core.py::test_kind"]),)
    other = (("tests", False, ["tests newly failing: tests/test_core.py::test_other"]),)
    candidate(ledger, "rejected", diff="1", gates=failing, review="proceed")
    candidate(ledger, "rejected", diff="2", gates=other, review="proceed")
    assert exits.check(state(ledger), Limits()) is None, "different tests"
    candidate(ledger, "rejected", diff="3", gates=other, review="reconsider")
    assert exits.check(state(ledger), Limits()) is None, "the reviewer objected"
    candidate(ledger, "rejected", diff="4", gates=other, review="proceed")
    candidate(ledger, "rejected", diff="5", gates=other, review="proceed")
    found = exits.check(state(ledger), Limits())
    assert found is not None and found.escalation
    assert found.condition == exits.TESTS_CONFLICT and "test_other" in found.message


def test_the_target_is_the_product_of_the_chains_links(ledger: Ledger) -> None:
    for index, diff in enumerate(("1", "2"), start=1):
        cid = candidate(ledger, "accepted", diff=diff, comparisons=(reading("wall", -10),))
        ledger.add_event(
            CAMPAIGN, "accepted", {"commit": f"c{index}", "index": index}, candidate_id=cid
        )
    now = state(ledger)
    assert now.head == "c2"
    assert exits.cumulative(now)["w"] == pytest.approx(19.0)
    assert exits.check(now, Limits(target_pct=20)) is None
    found = exits.check(now, Limits(target_pct=15))
    assert found is not None and found.condition == exits.TARGET_REACHED
    assert "19.00%" in found.message


def test_the_same_change_to_the_same_function_is_a_repeated_hypothesis(ledger: Ledger) -> None:
    candidate(ledger, "rejected", function="f", diff="x", sha="s1")
    now = state(ledger)
    assert exits.repeated(now, "g", "s1") is None
    assert exits.repeated(now, "f", "s2") is None
    found = exits.repeated(now, "f", "s1")
    assert found is not None and found.condition == exits.REPEATED_HYPOTHESIS


def test_budgets_count_candidates_tokens_and_cost_from_the_ledger(ledger: Ledger) -> None:
    call = RoleCall(CAMPAIGN, None, "optimizer", "p", "m", 300, 200, 0.25, 1.0, True, None, "", "")
    ledger.add_role_call(call)
    candidate(ledger, "accepted", diff="1")
    limits = Limits(max_candidates=5)
    assert exits.check(state(ledger), limits) is None
    found = exits.check(state(ledger), replace(limits, max_tokens=500))
    assert found is not None and found.condition == exits.BUDGET_TOKENS
    found = exits.check(state(ledger), replace(limits, max_cost_usd=0.25))
    assert found is not None and found.condition == exits.BUDGET_COST
    found = exits.check(state(ledger), replace(limits, max_candidates=1))
    assert found is not None and found.condition == exits.BUDGET_CANDIDATES
    ledger.add_role_call(replace(call, cost_usd=None))
    found = exits.check(state(ledger), replace(limits, max_cost_usd=100.0))
    assert found is not None and found.condition == exits.BUDGET_COST
    assert "no known price" in found.message


def _insert_event(ledger: Ledger, kind: str, at: datetime) -> None:
    with ledger.transaction() as db:
        db.execute(
            "INSERT INTO events(campaign, candidate_id, created_at, kind, body)"
            " VALUES (?, NULL, ?, ?, '{}')",
            (CAMPAIGN, at.isoformat(timespec="milliseconds"), kind),
        )


def test_time_counts_each_session_to_its_last_record_and_is_never_reset(tmp_path: Path) -> None:
    book = Ledger.in_folder(tmp_path)
    book.start_campaign(CAMPAIGN, target="t", repo=tmp_path, base_rev="b0", options={})
    start = datetime(2025, 1, 1, 10, tzinfo=UTC)
    _insert_event(book, "start", start)
    _insert_event(book, "note", start + timedelta(minutes=20))
    # Killed here: nothing was written for an hour, then the campaign was resumed.
    _insert_event(book, "resume", start + timedelta(minutes=80))
    now = start + timedelta(minutes=95)
    spent = load_state(book, CAMPAIGN, RULES, now=now).spent
    assert spent.seconds == pytest.approx(35 * 60)
    found = exits.check(load_state(book, CAMPAIGN, RULES, now=now), Limits(max_duration_s=1800))
    assert found is not None and found.condition == exits.BUDGET_TIME


def test_a_rejudged_candidate_replaces_the_unfinished_one_and_counts_once(ledger: Ledger) -> None:
    first = candidate(ledger, None, diff="d", finished=False)
    now = state(ledger)
    assert [a.candidate_id for a in now.unfinished()] == [first]
    assert now.spent.candidates == 1
    second = candidate(ledger, "rejected", diff="d", rejudge_of=first)
    now = state(ledger)
    assert [a.candidate_id for a in now.attempts] == [second]
    assert now.unfinished() == [] and now.spent.candidates == 1


def test_an_accept_whose_link_was_never_recorded_is_pending(ledger: Ledger) -> None:
    cid = candidate(ledger, "accepted", diff="d", base="b0")
    pending = state(ledger).pending_accept()
    assert pending is not None and pending.candidate_id == cid
    ledger.add_event(CAMPAIGN, "accepted", {"commit": "c1", "index": 1}, candidate_id=cid)
    assert state(ledger).pending_accept() is None


def test_history_shown_to_roles_has_no_holdout_name(ledger: Ledger) -> None:
    cid = candidate(ledger, "rejected", diff="d")
    redact = Redactor(("secret-check", "data/secret.txt", "secret.txt"))
    text = "wall is worse on workload secret-check (holdout) reading data/secret.txt"
    views = replace(state(ledger).attempts[0], reasons=(text,)).view(redact)
    assert views["candidate_id"] == cid
    assert views["reasons"] == ["wall is worse on workload [holdout] (holdout) reading [holdout]"]


def test_an_a_a_check_that_decides_anything_is_an_unstable_benchmark() -> None:
    assert exits.unstable({"verdict": "inconclusive"}) is None
    assert exits.unstable({"verdict": "skipped"}) is None
    for verdict in ("accepted", "rejected", "behaviour-differs"):
        found = exits.unstable({"verdict": verdict, "reasons": ["r"]})
        assert found is not None and found.condition == exits.UNSTABLE_BENCHMARK
