"""The policy, on evidence built from synthetic samples through the real statistics."""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace
from pathlib import Path

import numpy as np

import speedproof.judge.policy.carry_over
import speedproof.judge.policy.decide
import speedproof.judge.policy.evidence
import speedproof.judge.policy.readings
from speedproof.judge.policy.decide import decide, keep_measuring
from speedproof.judge.policy.evidence import Comparison, Evidence, PolicyRules
from speedproof.stats import compare, paired_compare

RULES = PolicyRules()  # wall; floor 3 %; limit 2 %; guardrails cpu, memory; support required.
ALLOWED_IMPORTS = {
    "__future__",
    "dataclasses",
    "typing",
    "collections.abc",
    "math",
    "speedproof.judge.policy.evidence",
    "speedproof.judge.policy.carry_over",
    "speedproof.judge.policy.readings",
}


def shaped(mean: float, sd: float, n: int, seed: int) -> list[float]:
    """Normal-looking samples whose mean and standard deviation are exactly `mean` and `sd`."""
    z = np.random.default_rng(seed).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return [float(x) for x in mean + sd * z]


def reading(
    workload: str,
    change_pct: float,
    *,
    metric: str = "wall",
    tier: str = "representative",
    cv_pct: float = 1.0,
    n: int = 25,
    seed: int = 0,
) -> Comparison:
    """A comparison whose candidate mean is exactly `change_pct` off a baseline mean of 100."""
    return compare(
        shaped(100.0, cv_pct, n, seed),
        shaped(100.0 + change_pct, cv_pct, n, seed + 1000),
        workload=workload,
        metric=metric,
        tier=tier,
        limit_pct=RULES.guardrail_limit_pct,
    )


def noise(workload: str, *, metric: str = "wall", seed: int = 0) -> Comparison:
    """Both sides drawn from one distribution: no real change."""
    rng = np.random.default_rng(seed)
    return compare(
        [float(x) for x in rng.normal(100.0, 1.0, 25)],
        [float(x) for x in rng.normal(100.0, 1.0, 25)],
        workload=workload,
        metric=metric,
        tier="representative",
        limit_pct=RULES.guardrail_limit_pct,
    )


def evidence(*comparisons: Comparison, **overrides: object) -> Evidence:
    fields: dict[str, object] = {
        "behaviour_matches": True,
        "failure_summary": (),
        "safety_checks_passed": True,
        "representative_evidence": True,
        "comparisons": comparisons,
    }
    fields.update(overrides)
    return Evidence(**fields)  # type: ignore[arg-type]


BIG_WIN = reading("parse", -20.0)


def test_a_win_in_one_workload_with_noise_in_another_is_accepted_on_the_winner() -> None:
    proof = evidence(reading("parse", -10.0), noise("render", seed=3), final=False)
    verdict = decide(proof, RULES)
    assert verdict.verdict == "accepted"
    assert verdict.rests_on == "parse"
    assert verdict.lane == "timed"
    assert "-10.00% (p=0.000 n=25)" in verdict.reasons[0]
    assert "significant" in verdict.reasons[0]
    # An accept settles the schedule: no further round is measured.
    assert keep_measuring(proof, RULES) == ()


def test_an_accept_rests_on_the_largest_supported_improvement() -> None:
    verdict = decide(evidence(reading("parse", -8.0), reading("render", -12.0, seed=5)), RULES)
    assert verdict.rests_on == "render"


def test_a_significant_memory_regression_rejects_even_with_a_big_wall_win() -> None:
    memory = reading("parse", 8.0, metric="memory", seed=7)
    proof = evidence(BIG_WIN, memory, final=False, earlier_rejects=1)
    verdict = decide(proof, RULES)
    assert verdict.verdict == "rejected"
    (reason,) = verdict.reasons
    assert "memory" in reason and "parse" in reason and "+8.00%" in reason
    assert "guardrail" in reason
    assert keep_measuring(proof, RULES) == ()


def test_a_guardrail_worsening_of_any_size_must_hold_at_two_looks_before_it_rejects() -> None:
    """Peak memory of a Go CLI read +7.34 % (p = 0.007) at one look on the same binary twice:
    a guardrail reject is confirmed by the next look, where a primary-metric worsening of twice
    the limit still rejects at once."""
    from speedproof.judge.policy.decide import streaks

    memory = reading("parse", 8.0, metric="memory", seed=7)
    first = evidence(BIG_WIN, memory, final=False)
    verdict = decide(first, RULES)
    assert verdict.verdict == "inconclusive"
    assert "a guardrail reject must hold at two looks in a row" in verdict.reasons[0]
    assert "the next look must confirm it" in verdict.reasons[0]
    assert keep_measuring(first, RULES)
    assert streaks(first, RULES) == (0, 1)
    last = decide(replace(first, final=True), RULES)
    assert last.verdict == "inconclusive"
    assert "no later look is left to confirm it" in last.reasons[0]
    assert decide(replace(first, earlier_rejects=1), RULES).verdict == "rejected"


def test_a_guardrail_is_judged_on_plausible_and_stress_workloads_too() -> None:
    for tier in ("plausible", "stress"):
        cpu = reading("big-input", 5.0, metric="cpu", tier=tier, seed=9)
        verdict = decide(evidence(BIG_WIN, cpu, earlier_rejects=1), RULES)
        assert verdict.verdict == "rejected"
        assert "big-input" in verdict.reasons[0]


def test_a_worsening_that_is_not_significant_keeps_the_schedule_measuring() -> None:
    # +5 % under 20 % noise: t ≈ 0.9, nowhere near significant, and the interval reaches past
    # the 2 % limit, so more pairs can still turn it into a rejection.
    memory = reading("parse", 5.0, metric="memory", cv_pct=20.0, seed=11)
    assert not memory.significant
    noisy_win = reading("parse", -2.0, cv_pct=20.0, seed=12)
    proof = evidence(noisy_win, memory, final=False)
    assert decide(proof, RULES).verdict == "inconclusive"
    why = keep_measuring(proof, RULES)
    assert any("memory" in w and "parse" in w and "could still be" in w for w in why)
    assert any("wall" in w and "could still improve" in w for w in why)


def test_a_not_significant_worsening_beside_an_accept_is_a_note_and_settles() -> None:
    memory = reading("parse", 5.0, metric="memory", cv_pct=20.0, seed=11)
    proof = evidence(BIG_WIN, memory, final=False)
    verdict = decide(proof, RULES)
    assert verdict.verdict == "accepted"
    assert any("memory" in note and "not significant" in note for note in verdict.notes)
    assert keep_measuring(proof, RULES) == ()


def test_a_tight_null_reading_stops_early_as_inconclusive() -> None:
    # ±1 % noise, 25 pairs: the interval excludes both the 3 % floor and the 2 % limit.
    proof = evidence(noise("parse", seed=21), final=False)
    assert decide(proof, RULES).verdict == "inconclusive"
    assert keep_measuring(proof, RULES) == ()


def test_the_last_look_settles_whatever_the_intervals_say() -> None:
    wide = reading("parse", -2.0, cv_pct=20.0, seed=12)
    assert keep_measuring(evidence(wide, final=False), RULES)
    assert keep_measuring(evidence(wide, final=True), RULES) == ()


def test_a_manifest_tolerance_replaces_the_limit_for_its_metric() -> None:
    rules = replace(RULES, guardrails=("cpu", "memory", "success"), limits=(("success", 10.0),))
    worse = replace(
        reading("parse", -5.0, metric="success", seed=40), lower_is_better=False
    )  # success fell 5 %: within its 10 % tolerance
    assert decide(evidence(BIG_WIN, worse), rules).verdict == "accepted"
    much_worse = replace(reading("parse", -25.0, metric="success", seed=41), lower_is_better=False)
    verdict = decide(evidence(BIG_WIN, much_worse, earlier_rejects=1), rules)
    assert verdict.verdict == "rejected"
    assert "10% guardrail" in verdict.reasons[0]


def test_an_exact_instruction_reading_can_carry_an_accept() -> None:
    exact = replace(
        reading("parse", -12.0, metric="instructions"),
        n_baseline=2,
        n_candidate=2,
        exact=True,
        lane="instructions",
        p_value=None,
    )
    rules = replace(RULES, primary_metric="instructions", guardrails=())
    verdict = decide(evidence(exact), rules)
    assert verdict.verdict == "accepted"
    assert verdict.lane == "instructions"
    assert "exact" in verdict.reasons[0]


def test_a_large_instruction_change_is_said_when_the_timed_lane_is_inconclusive() -> None:
    exact = replace(
        reading("parse", -9.0, metric="instructions"),
        exact=True,
        lane="instructions",
        p_value=None,
    )
    verdict = decide(evidence(reading("parse", -1.0), exact), RULES)
    assert verdict.verdict == "inconclusive"
    assert any("instruction lane" in r and "-9.00%" in r for r in verdict.reasons)


def test_measurement_notes_reach_the_verdict_but_never_its_reasons() -> None:
    note = "the machine was contended during round 2; the round was measured again."
    verdict = decide(evidence(BIG_WIN, measurement_notes=(note,)), RULES)
    assert verdict.verdict == "accepted"
    assert note in verdict.notes
    assert note not in verdict.reasons


def test_changed_behaviour_rejects_before_anything_else_even_with_a_great_win() -> None:
    proof = evidence(
        BIG_WIN,
        behaviour_matches=False,
        behaviour_detail=("stdout of workload parse differs at byte 12",),
        failure_summary=("tests",),
        safety_checks_passed=False,
    )
    verdict = decide(proof, RULES)
    assert verdict.verdict == "rejected"
    assert verdict.reasons == ("behaviour changed: stdout of workload parse differs at byte 12.",)
    assert verdict.rests_on is None
    assert keep_measuring(replace(proof, final=False), RULES) == ()


def test_a_failed_gate_rejects_and_names_the_gates() -> None:
    verdict = decide(evidence(BIG_WIN, failure_summary=("build", "tests")), RULES)
    assert verdict.verdict == "rejected"
    assert verdict.reasons == ("gates failed: build; tests.",)
    ends_in_a_stop = decide(evidence(BIG_WIN, failure_summary=("tests failed: 3 of 40.",)), RULES)
    assert ends_in_a_stop.reasons == ("gates failed: tests failed: 3 of 40.",)


def test_a_failed_safety_check_rejects_with_its_detail() -> None:
    proof = evidence(BIG_WIN, safety_checks_passed=False, safety_detail=("writes outside /tmp",))
    verdict = decide(proof, RULES)
    assert verdict.verdict == "rejected"
    assert "safety" in verdict.reasons[0] and "writes outside /tmp" in verdict.reasons[0]


def test_without_representative_comparisons_the_verdict_is_inconclusive() -> None:
    only_plausible = reading("other", -20.0, tier="plausible")
    too_few = reading("parse", -20.0, n=3)
    other_metric = reading("parse", -20.0, metric="cpu")
    verdict = decide(evidence(only_plausible, too_few, other_metric), RULES)
    assert verdict.verdict == "inconclusive"
    assert "no representative evidence" in verdict.reasons[0]
    unmeasured = decide(evidence(BIG_WIN, representative_evidence=False), RULES)
    assert unmeasured.verdict == "inconclusive"


def test_a_holdout_regression_of_the_primary_metric_rejects() -> None:
    holdout = reading("unseen", 6.0, tier="holdout", seed=13)
    verdict = decide(evidence(BIG_WIN, holdout), RULES)
    assert verdict.verdict == "rejected"
    assert "unseen" in verdict.reasons[0] and "holdout" in verdict.reasons[0]


def test_a_holdout_guardrail_reading_is_noted_but_not_judged() -> None:
    memory = reading("unseen", 8.0, metric="memory", tier="holdout", seed=15)
    verdict = decide(evidence(BIG_WIN, memory), RULES)
    assert verdict.verdict == "accepted"
    assert any("holdout" in note and "unseen" in note for note in verdict.notes)


def test_a_significant_regression_of_the_primary_metric_rejects_naming_the_workload() -> None:
    verdict = decide(evidence(BIG_WIN, reading("render", 5.0, seed=17)), RULES)
    assert verdict.verdict == "rejected"
    assert "render" in verdict.reasons[0] and "wall" in verdict.reasons[0]


def test_a_primary_metric_listed_as_a_guardrail_is_reported_once() -> None:
    rules = PolicyRules(guardrails=("wall", "memory"))
    verdict = decide(evidence(BIG_WIN, reading("render", 5.0, seed=19)), rules)
    assert verdict.verdict == "rejected"
    assert len(verdict.reasons) == 1


def test_all_failures_are_listed_in_one_rejection_guardrails_first() -> None:
    proof = evidence(
        BIG_WIN,
        reading("render", 5.0, seed=23),
        reading("parse", 8.0, metric="memory", seed=21),
        earlier_rejects=1,
    )
    verdict = decide(proof, RULES)
    assert verdict.verdict == "rejected"
    assert len(verdict.reasons) == 2
    assert "memory" in verdict.reasons[0] and "render" in verdict.reasons[1]


def test_an_improvement_below_the_floor_is_inconclusive_and_says_so() -> None:
    verdict = decide(evidence(reading("parse", -2.0)), RULES)
    assert verdict.verdict == "inconclusive"
    assert "below the 3% floor" in verdict.reasons[0]
    assert "parse" in verdict.reasons[0]


def test_an_improvement_above_the_floor_without_support_is_inconclusive_and_says_so() -> None:
    noisy = reading("parse", -5.0, cv_pct=20.0, seed=25)
    assert not noisy.supported
    verdict = decide(evidence(noisy), RULES)
    assert verdict.verdict == "inconclusive"
    assert "not significant" in verdict.reasons[0]


def test_an_interval_that_only_rules_out_a_regression_is_not_enough_to_accept() -> None:
    # Supported through its interval but not significant: good enough for a guardrail, not
    # for a win (7.95 % of null patches would pass at 8 % CV, docs/adr/0002).
    lucky = replace(reading("parse", -4.0), significant=False, supported=True)
    verdict = decide(evidence(lucky), RULES)
    assert verdict.verdict == "inconclusive"
    assert "needs a significant improvement" in verdict.reasons[0]


def test_without_required_support_the_point_estimate_decides() -> None:
    rules = PolicyRules(statistical_support_required=False)
    noisy_win = reading("parse", -5.0, cv_pct=20.0, seed=27)
    assert not noisy_win.supported
    accepted = decide(evidence(noisy_win), rules)
    assert accepted.verdict == "accepted"
    assert "point estimate" in accepted.reasons[0]
    noisy_loss = reading("render", 4.0, metric="cpu", cv_pct=20.0, seed=29)
    assert not noisy_loss.significant
    rejected = decide(evidence(noisy_win, noisy_loss), rules)
    assert rejected.verdict == "rejected"
    assert "cpu" in rejected.reasons[0] and "render" in rejected.reasons[0]
    assert decide(evidence(noisy_win, noisy_loss), RULES).verdict == "inconclusive"


def test_a_reading_that_cannot_be_a_percentage_is_noted_and_not_judged() -> None:
    # Pairs with a run at 0 leave no log ratio: the paired change is not a number at all.
    zero = paired_compare(
        [0.0] * 25,
        [1.0] * 25,
        workload="parse",
        metric="memory",
        tier="representative",
        limit_pct=2.0,
    )
    verdict = decide(evidence(BIG_WIN, zero), RULES)
    assert verdict.verdict == "accepted"
    assert any("memory on workload parse cannot be judged" in note for note in verdict.notes)


def test_a_guardrail_that_rises_from_a_baseline_of_zero_is_rejected_by_name() -> None:
    zero = compare(
        [0.0] * 25,
        [1.0] * 25,
        workload="parse",
        metric="memory",
        tier="representative",
        limit_pct=2.0,
    )
    # A timed guardrail's worsening holds at two looks before it rejects (docs/adr/0069).
    verdict = decide(evidence(BIG_WIN, zero, earlier_rejects=1), RULES)
    assert verdict.verdict == "rejected"
    assert verdict.reasons == (
        "memory is significantly worse on workload parse (representative): 0 → 1 (p=0.000 "
        "n=25), beyond the 2% guardrail.",
    )


def test_reasons_are_sentences() -> None:
    proofs = [
        evidence(BIG_WIN),
        evidence(reading("parse", -2.0)),
        evidence(BIG_WIN, reading("parse", 8.0, metric="memory", seed=31)),
        evidence(reading("parse", -4.0)),
    ]
    for proof in proofs:
        texts = [*decide(proof, RULES).reasons, *keep_measuring(replace(proof, final=False), RULES)]
        assert texts
        assert all(text.endswith(".") and "  " not in text for text in texts)


def _imported_modules(module: object) -> set[str]:
    path = Path(getattr(module, "__file__", ""))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            # A relative import is spelled out so it cannot slip past the allow-list.
            prefix = "speedproof." * node.level
            found.add(prefix + (node.module or "") if node.level else str(node.module))
    return found


def test_the_policy_imports_nothing_that_does_io() -> None:
    imported = _imported_modules(speedproof.judge.policy.decide)
    assert "speedproof.judge.policy.evidence" in imported
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS
    for part in (speedproof.judge.policy.carry_over, speedproof.judge.policy.readings):
        assert _imported_modules(part) <= ALLOWED_IMPORTS - {"speedproof.judge.policy.carry_over"}


def test_the_evidence_types_import_nothing_that_does_io() -> None:
    imported = _imported_modules(speedproof.judge.policy.evidence)
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS


def test_the_policy_calls_no_builtin_that_does_io_or_loads_code() -> None:
    forbidden = {"open", "print", "input", "exec", "eval", "compile", "__import__", "breakpoint"}
    assert forbidden <= set(dir(builtins))
    modules = (speedproof.judge.policy.decide, speedproof.judge.policy.evidence)
    for module in (*modules, speedproof.judge.policy.carry_over, speedproof.judge.policy.readings):
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        assert not names & forbidden, names & forbidden


def test_a_win_below_twice_the_floor_must_hold_at_two_looks_in_a_row() -> None:
    from speedproof.judge.policy.decide import accepts_at

    near = evidence(reading("parse", -4.0), final=False)
    first = decide(near, RULES)
    assert first.verdict == "inconclusive"
    assert "the next look must confirm it" in first.reasons[0]
    assert accepts_at(near, RULES)
    assert keep_measuring(near, RULES)
    confirmed = decide(replace(near, earlier_accepts=1), RULES)
    assert confirmed.verdict == "accepted" and confirmed.rests_on == "parse"
    # The last look of a five-look schedule; a schedule of one look accepts it (see
    # tests/judge/policy/test_policy_one_look.py).
    last = decide(replace(near, look=5, final=True), RULES)
    assert last.verdict == "inconclusive"
    assert "no later look is left to confirm it" in last.reasons[0]


def test_a_win_of_twice_the_floor_or_more_needs_no_second_look() -> None:
    assert decide(evidence(reading("parse", -6.5), final=False), RULES).verdict == "accepted"


def test_a_worsening_below_twice_the_limit_must_hold_at_two_looks_before_it_rejects() -> None:
    from speedproof.judge.policy.decide import rejects_at, streaks

    near = evidence(BIG_WIN, reading("render", 3.0, seed=17), final=False)
    first = decide(near, RULES)
    assert first.verdict == "inconclusive"
    assert "the next look must confirm it" in first.reasons[0]
    assert "render" in first.reasons[0]
    assert rejects_at(near, RULES)
    assert keep_measuring(near, RULES)
    assert streaks(near, RULES) == (0, 1)
    confirmed = decide(replace(near, earlier_rejects=1), RULES)
    assert confirmed.verdict == "rejected"
    assert "render" in confirmed.reasons[0] and "wall" in confirmed.reasons[0]


def test_an_unconfirmed_worsening_at_the_last_look_blocks_the_accept() -> None:
    last = decide(evidence(BIG_WIN, reading("parse", 3.0, metric="memory", seed=18)), RULES)
    assert last.verdict == "inconclusive"
    assert "no later look is left to confirm it" in last.reasons[0]
    assert "blocks an accept" in last.reasons[0]


def test_a_worsening_of_twice_the_limit_or_more_rejects_at_once() -> None:
    verdict = decide(evidence(BIG_WIN, reading("render", 4.5, seed=19), final=False), RULES)
    assert verdict.verdict == "rejected"


def test_evidence_given_by_position_is_refused_so_no_two_booleans_can_trade_places() -> None:
    # behaviour_matches and safety_checks_passed side by side: swapped, a failed safety check
    # would read as a behaviour change and the other way round.
    try:
        Evidence(False, (), True, False, ())  # type: ignore[misc]
    except TypeError as refused:
        assert "positional" in str(refused)
    else:
        raise AssertionError("Evidence was built from positional arguments")


def paired_reading(change_pct: float, sd_pct: float, n: int, alpha: float) -> Comparison:
    """A paired wall reading of `n` pairs whose log ratios have exactly the given mean and sd."""
    ratios = shaped(np.log1p(change_pct / 100.0), sd_pct / 100.0, n, seed=29)
    return paired_compare(
        [1.0] * n,
        [float(np.exp(r)) for r in ratios],
        workload="modules",
        metric="wall",
        tier="representative",
        limit_pct=RULES.guardrail_limit_pct,
        alpha=alpha,
    )


def test_a_first_look_worsening_past_twice_the_limit_whose_interval_reaches_the_limit_waits() -> (
    None
):
    """digraph's A/A record: the same binary read +4.69 % (p=0.006, n=10) at look 1; beyond
    twice the limit, but its interval still reached below the 2 % limit. One look of drift is
    not a slower program: the next look must confirm it."""
    drift = paired_reading(4.69, 3.5, 10, alpha=0.01)
    assert drift.ci_low_pct < RULES.guardrail_limit_pct < 2 * drift.delta_pct
    first = decide(evidence(drift, final=False), RULES)
    assert first.verdict == "inconclusive"
    assert "the next look must confirm it" in first.reasons[0]
    assert decide(evidence(drift, final=False, earlier_rejects=1), RULES).verdict == "rejected"


def test_a_worsening_whose_whole_interval_lies_past_the_limit_rejects_at_once() -> None:
    clear = paired_reading(12.0, 3.5, 10, alpha=0.01)
    assert clear.ci_low_pct > RULES.guardrail_limit_pct
    assert decide(evidence(clear, final=False), RULES).verdict == "rejected"
