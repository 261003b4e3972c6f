"""The measuring budget grows to what a win at the floor needs at the noise the first round
measured, within one total a judgement; a quick workload keeps the budget it had."""

from __future__ import annotations

import numpy as np

from speedproof.judge.measure.budget_sizing import CAP, FLOOR, PER_WORKLOAD, TOTAL, size_budget
from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.manifest import Manifest
from speedproof.stats import Schedule
from support.sequential import manifest

SCHEDULE = Schedule(round_pairs=10, max_pairs=200, budget_s=20.0)


def ratios(cv: float, n: int = 10, seed: int = 0) -> list[tuple[list[float], list[float]]]:
    rng = np.random.default_rng(seed)
    base = [float(x) for x in np.exp(rng.normal(0.0, cv, n))]
    cand = [float(x) for x in np.exp(rng.normal(0.0, cv, n))]
    return [(base, cand)]


def sized(cv: float, pair_s: float, total_s: float = 120.0) -> tuple[float, str]:
    found = size_budget(
        SCHEDULE,
        per_workload_s=20.0,
        total_s=total_s,
        floor_pct=3.0,
        pair_s=pair_s,
        ratios=ratios(cv),
    )
    return found.budget_s, found.knob


def test_a_one_second_workload_at_a_real_clis_noise_gets_the_total_not_ten_pairs() -> None:
    # sqlparse's first judge read 7.6 % a pair; 20 s bought 10 pairs of its 1 s workload.
    budget, knob = sized(0.054, pair_s=2.0)
    assert (budget, knob) == (120.0, TOTAL)


def test_a_quiet_slow_workload_keeps_its_own_budget_when_that_resolves_the_floor() -> None:
    budget, knob = sized(0.003, pair_s=2.0)
    assert (budget, knob) == (20.0, PER_WORKLOAD)


def test_a_raise_the_total_can_pay_for_is_granted_in_full_and_named_after_the_floor() -> None:
    budget, knob = sized(0.02, pair_s=2.0, total_s=1000.0)
    assert 20.0 < budget < 400.0 and knob == FLOOR


def test_a_raise_past_max_pairs_stops_at_max_pairs() -> None:
    budget, knob = sized(0.1, pair_s=0.3, total_s=1000.0)
    assert (budget, knob) == (200 * 0.3, CAP)


def test_a_total_of_zero_keeps_the_per_workload_budget() -> None:
    assert sized(0.054, pair_s=2.0, total_s=0.0) == (20.0, PER_WORKLOAD)


def slow_stream(n: int, cv: float, ratio: float, seed: int) -> RecordedWorkload:
    """A 1 s workload: about 2 s of timed runs a pair."""
    rng = np.random.default_rng(seed)
    base = np.exp(rng.normal(0.0, cv, n))
    cand = ratio * np.exp(rng.normal(0.0, cv, n))
    return RecordedWorkload.of_wall("parse", [float(x) for x in base], [float(x) for x in cand])


def judged(found: Manifest, seed: int) -> tuple[str, int, SequentialRule]:
    rule = SequentialRule(
        found,
        schedule_for(found),
        source=RecordedPairs({"parse": slow_stream(200, 0.07, 0.9, seed)}),
    )
    evidence = rule.run()
    pairs = next(c.n for c in evidence.comparisons if c.metric == "wall")
    return decide(evidence, found.rules()).verdict, pairs, rule


def test_a_real_ten_percent_win_on_a_noisy_one_second_workload_is_measured_past_ten_pairs() -> None:
    """At 7 % noise a run (about 10 % a pair) ten pairs leave most 10 % wins unresolved; the
    sized budget measures on, within the two minutes a judgement may take."""
    found = manifest()
    verdicts = [judged(found, seed) for seed in range(10)]
    assert sum(v == "accepted" for v, _, _ in verdicts) >= 9, [(v, n) for v, n, _ in verdicts]
    assert max(n for _, n, _ in verdicts) > 10
    assert all(n <= 60 for _, n, _ in verdicts)
    old = found.model_copy(
        update={"policy": found.policy.model_copy(update={"max_total_measure_s": 0.0})}
    )
    before = [judged(old, seed) for seed in range(10)]
    assert all(n <= 10 for _, n, _ in before)
    assert sum(v == "accepted" for v, _, _ in before) < 9


def test_the_budget_line_says_what_a_floor_win_needs_and_which_knob_bounds_it() -> None:
    _, _, rule = judged(manifest(), 0)
    assert rule.sizing is not None
    assert rule.sizing.describe(60).endswith("the budget allows 60 ([policy] max_total_measure_s)")
