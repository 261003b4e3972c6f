"""The one sequential rule, fed synthetic pairs whose answers are known.

`SequentialRule` is the loop the judge, `verify`, `calibrate` and every benchmark run; here its
pairs come from `RecordedPairs`, so each test knows exactly what the machine "measured".
"""

from __future__ import annotations

from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence
from speedproof.stats import Schedule
from speedproof.verify.verification import verify_options
from support.sequential import manifest, per_workload_budget, stream


def run(recorded: RecordedWorkload, schedule: Schedule) -> tuple[str, int, Evidence]:
    """(verdict, the look the rule stopped at, its evidence)."""
    rule = SequentialRule(manifest(), schedule, source=RecordedPairs({"parse": recorded}))
    evidence = rule.run()
    return decide(evidence, manifest().rules()).verdict, rule.state.look, evidence


def test_a_clear_win_is_accepted_at_the_first_look() -> None:
    # Ten pairs all 10 % faster: the exact signed-rank p is 2 / 2^10 ≈ 0.00195, under the first
    # look's 0.01 (with rho = 3 the first look's 0.0004 could never be reached).
    found = stream(50, 0.01, 0.90, seed=1)
    assert run(found, Schedule())[:2] == ("accepted", 1)
    verdict, look, _ = run(found, Schedule(rho=3.0))
    assert verdict == "accepted" and look > 1


def test_a_clear_slowdown_is_rejected_at_the_first_look() -> None:
    assert run(stream(50, 0.01, 1.10, seed=2), Schedule())[:2] == ("rejected", 1)


def test_a_quiet_no_change_stops_early_as_inconclusive() -> None:
    verdict, look, _ = run(stream(50, 0.01, 1.0, seed=4), Schedule())
    assert verdict == "inconclusive" and look <= 2


def test_a_significant_win_below_the_floor_stops_early_and_is_not_accepted() -> None:
    verdict, look, evidence = run(stream(50, 0.002, 0.99, seed=5), Schedule())
    wall = next(c for c in evidence.comparisons if c.metric == "wall")
    assert wall.significant and 0.5 < wall.improvement_pct < 1.5
    assert verdict == "inconclusive" and look < Schedule().looks()


def test_a_noisy_stream_goes_to_the_last_look_and_ends_inconclusive() -> None:
    verdict, look, evidence = run(stream(50, 0.10, 1.0, seed=6), Schedule())
    assert verdict == "inconclusive" and look == Schedule().looks()
    assert evidence.final


def test_a_reading_without_a_ratio_cannot_improve_with_more_pairs_and_stops_at_once() -> None:
    found = stream(50, 0.05, 0.8, seed=7)
    wall = list(found.candidate["wall"])
    wall[0] = 0.0
    broken = RecordedWorkload.of_wall("parse", list(found.baseline["wall"]), wall)
    assert run(broken, Schedule())[:2] == ("inconclusive", 1)


def test_a_rule_never_reads_past_the_pairs_of_its_last_look() -> None:
    # 30 pairs recorded, a 30-pair schedule: a stream one look longer would be needed to read on.
    verdict, look, evidence = run(stream(30, 0.10, 1.0, seed=6), Schedule(max_pairs=30))
    assert look == 3 and evidence.final and verdict == "inconclusive"


def test_a_time_budget_sizes_the_last_look_from_what_the_first_round_cost() -> None:
    # Pairs of 0.1 s a side cost 0.2 s: a 9 s budget fits 45 pairs, which is 4 whole rounds.
    found = stream(200, 0.10, 1.0, seed=6)
    schedule = Schedule(round_pairs=10, max_pairs=200, budget_s=9.0)
    rule = SequentialRule(per_workload_budget(), schedule, source=RecordedPairs({"parse": found}))
    rule.run()
    assert rule.schedule.max_pairs == 40 and rule.schedule.budget_s is None
    assert rule.state.look <= 4


def test_a_budget_never_lifts_the_last_look_past_max_pairs_nor_below_one_round() -> None:
    capped = Schedule(round_pairs=10, max_pairs=55, budget_s=1000.0).within_budget(0.2)
    assert (capped.max_pairs, capped.budget_s) == (55, None)
    tight = Schedule(round_pairs=10, max_pairs=200, budget_s=0.5).within_budget(0.2)
    assert tight.max_pairs == 10
    assert Schedule.fixed(25).within_budget(0.2) == Schedule.fixed(25)


def test_a_nonsense_budget_is_an_error() -> None:
    for budget in (0.0, -1.0, float("nan")):
        try:
            Schedule(budget_s=budget)
        except ValueError as exc:
            assert "time budget" in str(exc)
        else:
            raise AssertionError(f"budget {budget} was taken")


def test_no_change_on_a_noisy_machine_stops_before_the_budget_is_spent_and_says_why() -> None:
    found = stream(200, 0.12, 1.0, seed=11)
    verdict, look, evidence = run(found, Schedule(round_pairs=10, max_pairs=200))
    assert verdict == "inconclusive" and look < 20
    assert any(n.startswith("measurement stopped early, at ") for n in evidence.measurement_notes)


def test_a_true_win_of_twice_the_floor_is_measured_to_an_accept_not_stopped_early() -> None:
    found = stream(200, 0.12, 0.94, seed=12)
    verdict, _, evidence = run(found, Schedule(round_pairs=10, max_pairs=200))
    assert verdict == "accepted", evidence.measurement_notes


def test_a_schedule_that_does_not_stop_early_measures_to_its_last_look() -> None:
    # The stream the early stop ends before look 20 (the test above), measured without it.
    found = stream(200, 0.12, 1.0, seed=11)
    verdict, look, evidence = run(found, Schedule(round_pairs=10, max_pairs=200, stops_early=False))
    assert (verdict, look) == ("inconclusive", 20)
    assert not any(n.startswith("measurement stopped early") for n in evidence.measurement_notes)


def test_verify_judges_with_twice_the_budget_and_no_early_stop() -> None:
    options = verify_options("HEAD", None, None)
    schedule = options.schedule(manifest())
    judged = schedule_for(manifest())
    assert (
        schedule.budget_s == 2 * judged.budget_s if judged.budget_s else schedule.budget_s is None
    )
    assert schedule.max_pairs == 2 * judged.max_pairs
    assert (judged.stops_early, schedule.stops_early) == (True, False)
    assert options.origin == "verify"
