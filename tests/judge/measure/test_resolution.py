"""The note for a win the last look could not resolve, on synthetic readings of known spread."""

from __future__ import annotations

import math

from speedproof.judge.measure.resolution import unresolved_win_notes
from speedproof.judge.policy.evidence import Evidence, PolicyRules
from speedproof.stats import Schedule, paired_compare
from speedproof.stats.power import pairs_to_resolve, resolvable_win_pct
from support.evidence import gates_passed

RULES = PolicyRules(
    primary_metric="wall", accept_floor_pct=3.0, guardrail_limit_pct=2.0, guardrails=()
)
SCHEDULE = Schedule()  # the last look, at 50 pairs, tests at 0.01


def _evidence(shift: float, spread: float, *, final: bool = True, pairs: int = 50) -> Evidence:
    """Log ratios spread evenly and symmetrically around `shift`: trimmed mean exactly `shift`."""
    ratios = [shift + spread * (2.0 * i / (pairs - 1) - 1.0) for i in range(pairs)]
    ratios = ratios[::2] + ratios[1::2]  # not sorted: run order does not matter to the tests
    reading = paired_compare(
        [1.0] * pairs,
        [math.exp(r) for r in ratios],
        workload="shop",
        metric="wall",
        tier="representative",
        limit_pct=2.0,
        alpha=0.01,
    )
    return gates_passed(reading, look=SCHEDULE.looks(), final=final, alpha=0.01)


def test_an_unresolved_win_above_the_floor_gets_the_noise_and_the_pairs_it_needs() -> None:
    evidence = _evidence(math.log(0.95), 0.3)  # 4.9 % faster, ratios from -35 % to +28 %
    (note,) = unresolved_win_notes(evidence, RULES, SCHEDULE)
    spread = dict(evidence.comparisons[0].extra)["log_ratio_winsorized_sd"]
    assert spread is not None
    assert note.startswith("wall on workload shop improved by 5.00% without significance at 50")
    assert f"winsorized sd {spread * 100:.1f}% per pair" in note
    assert f"finds a win of {resolvable_win_pct(spread, SCHEDULE):.1f}%" in note
    needed = pairs_to_resolve(5.0, spread, SCHEDULE)
    assert needed is not None and needed > 50
    assert f"would need about {needed} pairs" in note


def test_a_win_no_schedule_can_resolve_points_to_the_instruction_lane() -> None:
    (note,) = unresolved_win_notes(_evidence(math.log(0.96), 3.0), RULES, SCHEDULE)
    assert "more than 1000 pairs" in note and "instructions" in note


def test_no_note_before_the_last_look_for_a_change_under_the_floor_or_for_a_verdict() -> None:
    assert unresolved_win_notes(_evidence(math.log(0.95), 0.3, final=False), RULES, SCHEDULE) == ()
    assert unresolved_win_notes(_evidence(math.log(0.99), 0.3), RULES, SCHEDULE) == ()
    assert unresolved_win_notes(_evidence(math.log(1.05), 0.3), RULES, SCHEDULE) == ()
    # a clear win is accepted: nothing left unresolved
    assert unresolved_win_notes(_evidence(math.log(0.8), 0.05), RULES, SCHEDULE) == ()


def _with_count(evidence: Evidence, baseline: float, candidate: float) -> Evidence:
    from dataclasses import replace

    from speedproof.judge.policy.evidence import exact_comparison

    count = exact_comparison(
        workload="shop",
        metric="instructions",
        tier="representative",
        lane="instructions",
        baseline=baseline,
        candidate=candidate,
    )
    return replace(evidence, comparisons=(*evidence.comparisons, count))


def test_an_unresolved_win_says_whether_the_exact_instruction_count_supports_it() -> None:
    evidence = _evidence(math.log(0.95), 0.3)
    (bare,) = unresolved_win_notes(evidence, RULES, SCHEDULE)
    assert "instruction count" not in bare
    (backed,) = unresolved_win_notes(_with_count(evidence, 1000.0, 874.0), RULES, SCHEDULE)
    assert "instruction count of that workload read -12.60%" in backed
    assert backed.endswith("it supports a win of at least the floor.")
    (against,) = unresolved_win_notes(_with_count(evidence, 1000.0, 1000.0), RULES, SCHEDULE)
    assert against.endswith("it does not support a win.")


def test_the_hint_names_the_setting_that_bounded_the_schedule() -> None:
    evidence = _evidence(math.log(0.95), 0.3)
    (note,) = unresolved_win_notes(evidence, RULES, SCHEDULE, "[policy] max_total_measure_s")
    assert "([policy] max_total_measure_s bounded this schedule at 50)" in note
