"""When the time budget, not the plan, ends a series, that look is the last and spends the alpha
left.

The first round of `parse` costs 0.2 s a pair, so a 20 s budget plans 100 pairs: ten looks at
0.005 each. From pair 10 on every run takes ten times as long (a machine that got slower), so
after look 2 the budget is spent. Look 2 is then the last one: it tests at 0.05 - 0.005 = 0.045,
and the union bound still sums to 0.05 because where the series ended was read from what the
pairs cost in time, never from the differences they showed.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence
from speedproof.stats import Schedule
from support.sequential import per_workload_budget as manifest

BUDGET = Schedule(round_pairs=10, max_pairs=200, budget_s=20.0)


def slowing(n: int, cv: float, ratio: float, seed: int) -> RecordedWorkload:
    """`n` pairs of 0.1 s runs that take ten times as long from pair 10 on."""
    rng = np.random.default_rng(seed)
    scale = np.where(np.arange(n) < 10, 0.1, 1.0)
    base = scale * np.exp(rng.normal(0.0, cv, n))
    cand = scale * ratio * np.exp(rng.normal(0.0, cv, n))
    return RecordedWorkload.of_wall("parse", [float(x) for x in base], [float(x) for x in cand])


def run(recorded: RecordedWorkload) -> tuple[str, Evidence, SequentialRule]:
    rule = SequentialRule(manifest(), BUDGET, source=RecordedPairs({"parse": recorded}))
    evidence = rule.run()
    return decide(evidence, manifest().rules()).verdict, evidence, rule


def test_the_look_the_budget_ends_spends_the_alpha_left_and_accepts_what_the_plan_would_not() -> (
    None
):
    # -9.20 % (p=0.036, n=20): significant at 0.045, not at the plan's 0.005.
    verdict, evidence, rule = run(slowing(30, 0.12, 0.89, seed=2))
    assert (verdict, rule.state.look, evidence.final) == ("accepted", 2, True)
    assert math.isclose(evidence.alpha, 0.045)
    said = [n for n in evidence.measurement_notes if n.startswith("look 2 of 10 was the last")]
    assert said and "the 20 s measuring budget ran out" in said[0], evidence.measurement_notes
    planned = replace(rule, schedule=replace(rule.schedule, last_look=None))
    assert decide(planned.evidence(), manifest().rules()).verdict == "inconclusive"


def test_no_change_at_a_look_the_budget_ends_is_still_not_accepted() -> None:
    verdict, evidence, rule = run(slowing(30, 0.12, 1.0, seed=10_003))
    assert (verdict, rule.state.look) == ("inconclusive", 2)
    # The first round's cost sized this plan at nine looks.
    assert any(n.startswith("look 2 of 9 was the last") for n in evidence.measurement_notes)


def test_a_schedule_ended_early_keeps_the_levels_before_and_sums_to_alpha() -> None:
    plan = Schedule(round_pairs=10, max_pairs=60)
    ended = plan.ending_at(2)
    assert (ended.looks(), ended.planned_looks()) == (2, 6)
    assert ended.alpha_at(1) == plan.alpha_at(1)
    assert math.isclose(ended.alpha_at(1) + ended.alpha_at(2), plan.alpha)
    with pytest.raises(ValueError, match=r"look must lie in 1\.\.6"):
        plan.ending_at(7)


# 2000 A/A series end at the budget's look 2; a false accept there is a false significance in
# the direction of a win of at least the floor, so the rate must stay under alpha. Tolerance:
# three binomial standard deviations at alpha, sqrt(0.05 * 0.95 / 2000) = 0.49 %.
AA_SERIES = 2000


@pytest.mark.slow
def test_a_budget_ended_last_look_keeps_no_change_series_at_or_under_alpha() -> None:
    accepted = significant = ended = 0
    for seed in range(AA_SERIES):
        verdict, evidence, rule = run(slowing(30, 0.12, 1.0, seed=10_000 + seed))
        ended += rule.state.look == 2 and evidence.final
        accepted += verdict == "accepted"
        wall = next(c for c in evidence.comparisons if c.metric == "wall")
        significant += wall.significant or verdict != "inconclusive"
    alpha = BUDGET.alpha
    tolerance = 3 * math.sqrt(alpha * (1 - alpha) / AA_SERIES)
    print(
        f"{AA_SERIES} A/A series, {ended} ended by the budget at look 2: {accepted} accepted "
        f"({accepted / AA_SERIES:.2%}), {significant} significant at the last look or settled "
        f"({significant / AA_SERIES:.2%}); alpha {alpha:g}, tolerance {tolerance:.2%}"
    )
    # A few series settle at look 1 (a clear worsening, or nothing within reach) before the
    # budget has a say: 9 of 2000 with these seeds.
    assert ended >= 0.99 * AA_SERIES
    assert accepted / AA_SERIES <= alpha + tolerance
    assert significant / AA_SERIES <= alpha + tolerance
