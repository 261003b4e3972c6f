"""Unseen workloads are measured until carry-over is settled on each, through the one rule.

The representative workload `parse` reads a clear -11.5 % win in its first 10 pairs. What the
holdout reads decides: a noisy holdout is measured further instead of being called a missing
win, a flat one ends the accept at once, and when no pairs are left the verdict says the
reading was not resolved.
"""

from __future__ import annotations

from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.carry_over import CHEAT, UNRESOLVED
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence, Verdict
from speedproof.manifest import Manifest
from speedproof.stats import Schedule
from support.sequential import manifest, stream

HOLDOUT = "parse-holdout"


def with_unseen(*extra: tuple[str, str]) -> Manifest:
    """The toy manifest with holdout-tier workloads (id, twin kind) beside `parse`."""
    base = manifest()
    (parse,) = base.workloads
    added = [
        parse.model_copy(update={"id": wid, "tier": "holdout", "twin": kind}) for wid, kind in extra
    ]
    return base.model_copy(update={"workloads": [parse, *added]})


def renamed(recorded: RecordedWorkload, workload: str) -> RecordedWorkload:
    return RecordedWorkload(workload, recorded.baseline, recorded.candidate)


def judge(
    holdout: RecordedWorkload, schedule: Schedule
) -> tuple[Verdict, Evidence, SequentialRule]:
    found = with_unseen((HOLDOUT, "copy"))
    streams = {"parse": stream(50, 0.01, 0.885, seed=1), HOLDOUT: renamed(holdout, HOLDOUT)}
    rule = SequentialRule(found, schedule, source=RecordedPairs(streams))
    evidence = rule.run()
    return decide(evidence, found.rules()), evidence, rule


def reading_of(evidence: Evidence, workload: str) -> str:
    c = next(c for c in evidence.comparisons if c.workload == workload and c.metric == "wall")
    return c.render()


# A true -11.5 % win at 9 % noise a run whose first 10 pairs happen to read +0.81 % (seed 983 of
# 2000 searched): the gron twin's +1.05 % at n=10 again, on a holdout.
UNLUCKY_START = stream(60, 0.09, 0.885, seed=983)


def test_an_unseen_reading_too_noisy_at_first_is_measured_further_and_the_win_stands() -> None:
    verdict, evidence, _ = judge(UNLUCKY_START, Schedule(round_pairs=10, max_pairs=50))
    assert verdict.verdict == "accepted", verdict.reasons
    holdout = next(c for c in evidence.comparisons if c.workload == HOLDOUT and c.metric == "wall")
    assert holdout.n > 10 and holdout.improvement_pct > 3.0, holdout.render()


def test_an_unseen_reading_still_unresolved_when_its_pairs_run_out_is_said_to_be() -> None:
    verdict, evidence, _ = judge(UNLUCKY_START, Schedule.fixed(10))
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(UNRESOLVED), verdict.reasons
    assert HOLDOUT in verdict.reasons[0] and "n=10" in verdict.reasons[0]
    assert "n=10" in reading_of(evidence, HOLDOUT)


def test_a_holdout_that_shows_none_of_the_win_ends_the_accept_within_a_step() -> None:
    # At look 1's level (0.01) its first 10 pairs read [-3.62 %, +2.91 %] against the 2.96 %
    # that must carry over: one step of 5 more puts the interval's best end below it.
    flat = stream(60, 0.01, 1.0, seed=3)
    verdict, evidence, _ = judge(flat, Schedule(round_pairs=10, max_pairs=50))
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT) and HOLDOUT in verdict.reasons[0]
    assert "n=15" in reading_of(evidence, HOLDOUT)


def test_twins_of_copied_or_thinned_content_are_marked_seen_and_new_content_is_not() -> None:
    found = with_unseen(("a~twin", "copy"), ("b~twin", "lines"), ("c~twin", "mutated"))
    streams = {"parse": stream(50, 0.01, 0.885, seed=1)}
    rule = SequentialRule(found, Schedule(), source=RecordedPairs(streams))
    rule._look([w for w in found.workloads if w.id == "parse"])
    assert rule.evidence().seen_inputs == ("a~twin", "b~twin")
