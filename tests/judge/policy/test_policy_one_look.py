"""A schedule of one look (`--pairs N`, `[policy] pairs`, the reported lane, `verify`) accepts a
significant win above the floor; a sequential schedule still confirms a small win at two looks.

The readings are synthetic with known answers: no program is run and nothing is timed.
"""

from __future__ import annotations

import random
from dataclasses import replace

from speedproof.ground.program import Side
from speedproof.judge.measure.environment import LoadSnapshot
from speedproof.judge.measure.replay import RecordedPairs
from speedproof.judge.measure.runner import LoadWindow, PairSeries, Sample
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.measure.sequential_rule import RuleState, SequentialRule
from speedproof.judge.policy.decide import decide, keep_measuring
from speedproof.judge.policy.evidence import Comparison, Evidence, PolicyRules
from speedproof.manifest import Manifest
from speedproof.manifest_loading import parse_manifest
from support.evidence import gates_passed
from support.toy_target import toy_manifest, workload_table

RULES = PolicyRules()  # wall; floor 3 %; limit 2 %; guardrails cpu, memory; support required.

# A 4 % win, significant, its interval clear of 0 and of the 3 % floor's twin (6 %) alike.
WIN = Comparison(
    workload="parse",
    metric="wall",
    tier="representative",
    n_baseline=60,
    n_candidate=60,
    baseline_mean=100.0,
    candidate_mean=96.0,
    delta_pct=-4.0,
    ci_low_pct=-4.8,
    ci_high_pct=-3.2,
    p_value=0.0004,
    welch_t=-9.0,
    p_welch=0.0001,
    p_mannwhitney=0.0003,
    significant=True,
    supported=True,
)


def evidence(*comparisons: Comparison, look: int, final: bool) -> Evidence:
    return gates_passed(*comparisons, look=look, final=final)


def test_a_one_look_schedule_accepts_a_significant_win_between_the_floor_and_twice_it() -> None:
    verdict = decide(evidence(WIN, look=1, final=True), RULES)
    assert verdict.verdict == "accepted", verdict.reasons
    assert verdict.rests_on == "parse"
    assert verdict.reasons[0] == (
        "wall improved by 4.00% on workload parse: -4.00% (p=0.000 n=60), at least the 3% "
        "floor; the change is significant at the schedule's only look, which spends the whole "
        "alpha (0.05): a fixed schedule has no second look to confirm a win under 6% (twice "
        "the floor)."
    )
    # A win of twice the floor or more says nothing of looks, one or several.
    big = replace(WIN, delta_pct=-7.0, ci_low_pct=-7.8, ci_high_pct=-6.2)
    assert (
        decide(evidence(big, look=1, final=True), RULES)
        .reasons[0]
        .endswith("the change is significant.")
    )


def test_the_first_look_of_a_sequential_schedule_still_waits_for_confirmation() -> None:
    first = evidence(WIN, look=1, final=False)
    verdict = decide(first, RULES)
    assert verdict.verdict == "inconclusive"
    assert "the look before did not accept; the next look must confirm it." in verdict.reasons[0]
    assert keep_measuring(first, RULES)
    assert decide(replace(first, look=2, earlier_accepts=1), RULES).verdict == "accepted"


def test_the_last_look_of_a_sequential_schedule_is_not_a_one_look_schedule() -> None:
    verdict = decide(evidence(WIN, look=5, final=True), RULES)
    assert verdict.verdict == "inconclusive"
    assert "no later look is left to confirm it" in verdict.reasons[0]


def test_a_small_worsening_still_blocks_a_one_look_accept() -> None:
    # Only the accept side changes: a significant 3 % memory worsening (limit 2 %, twice it 4 %)
    # is unconfirmed at one look and keeps the verdict inconclusive, never accepted.
    memory = replace(
        WIN, metric="memory", delta_pct=3.0, ci_low_pct=2.2, ci_high_pct=3.8, welch_t=7.0
    )
    verdict = decide(evidence(WIN, memory, look=1, final=True), RULES)
    assert verdict.verdict == "inconclusive"
    assert "An unconfirmed worsening blocks an accept." in verdict.reasons[0]


# ----- verify's schedule, through the evidence the judge builds ------------------------------

MANIFEST = toy_manifest(
    workload_table("w", "prog.py", tier="representative"),
    instructions=False,
    policy='guardrails = ["cpu", "memory"]',
)


def _series(pairs: int, win: float, seed: int) -> PairSeries:
    """`pairs` ABBA pairs of a 100 ms run with 0.5 % noise a run, the candidate `win` faster;
    CPU follows wall, peak memory is a constant 20 MiB on both sides."""
    rng = random.Random(seed)
    samples: list[Sample] = []
    for index in range(pairs):
        order: tuple[Side, Side] = ("baseline", "candidate")
        for position, side in enumerate(order if index % 2 == 0 else order[::-1]):
            scale = 1.0 - win if side == "candidate" else 1.0
            wall = 0.1 * scale * (1.0 + rng.gauss(0.0, 0.005))
            samples.append(Sample(side, index, position, wall, wall, 20480, 0, "", ""))
    quiet = LoadSnapshot(0.0, 0.0, 0.0, 0.0)
    return PairSeries("w", tuple(samples), (), (), (), (LoadWindow(quiet, quiet),), (60.0,))


def _evidence_at_first_look(manifest: Manifest, pairs: int | None, series: PairSeries) -> Evidence:
    """The evidence the judge's `SequentialRule` builds at look 1 of its schedule."""
    rule = SequentialRule(manifest, schedule_for(manifest, pairs), source=RecordedPairs({}))
    rule.state = RuleState(series={"w": series}, look=1)
    return rule.evidence()


# `speedproof verify --pairs 60`: one look of 60 pairs.
VERIFY_PAIRS = 60


def test_verify_with_a_fixed_60_pairs_accepts_a_true_four_percent_win_at_its_one_look() -> None:
    manifest = parse_manifest(MANIFEST, "speedproof.toml")
    found = _evidence_at_first_look(manifest, VERIFY_PAIRS, _series(VERIFY_PAIRS, 0.04, 1))
    assert (found.look, found.final, found.alpha) == (1, True, 0.05)
    verdict = decide(found, manifest.rules())
    # `Verification` flags every re-judgement that is not accepted as `no-longer-holds`.
    assert verdict.verdict == "accepted", verdict.reasons
    assert verdict.rests_on == "w"
    assert "improved by 4.0" in verdict.reasons[0] and "n=60" in verdict.reasons[0]


def test_the_judges_sequential_schedule_confirms_the_same_win_at_a_second_look() -> None:
    manifest = parse_manifest(MANIFEST, "speedproof.toml")
    # Ten pairs all in one direction: exact signed-rank p 2/1024, inside look 1's 0.01.
    found = _evidence_at_first_look(manifest, None, _series(10, 0.04, 1))
    assert (found.look, found.final) == (1, False)
    verdict = decide(found, manifest.rules())
    assert verdict.verdict == "inconclusive"
    assert "the next look must confirm it" in verdict.reasons[0]
