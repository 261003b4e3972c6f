"""What a holdout is held against: the smallest representative win once the win's own twin of
new content has a reading, else the win the accept rests on (docs/adr/0085).

A holdout is another input, and a real win's size follows its input and options; the twin of new
content already holds the accept's own win at half, where a table keyed by content misses.
"""

from __future__ import annotations

from speedproof.judge.policy.carry_over import CHEAT, UNRESOLVED, held_readings
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence
from support.carry_over import RULES, reading
from support.evidence import gates_passed


def one_pass(*, twin_seen: bool = False, twin: bool = True) -> Evidence:
    """textstat's one-pass count of lines per top word, as one judgement read it: -23.29 % with
    `--top 60`, -5.42 % with `--top 30`, its twin -26.59 %, the tickets holdout (default top 20)
    -5.48 % over 110 pairs, interval [-8.60 %, -2.25 %]."""
    readings = [
        reading("reviews", -23.29, tier="representative"),
        reading("novel", -5.42, tier="representative", seed=3),
        reading("tickets-holdout", -5.48, tier="holdout", seed=2, runs=110, spread=11.0),
    ]
    if twin:
        readings.append(reading("reviews~twin", -26.59, tier="holdout", seed=1))
    return gates_passed(*readings, seen=("reviews~twin",) if twin_seen else ())


def test_the_holdout_reading_straddles_a_quarter_of_the_largest_win() -> None:
    holdout = next(c for c in one_pass().comparisons if c.workload == "tickets-holdout")
    quarter = 0.25 * 23.29
    assert holdout.improvement_pct < quarter < -holdout.ci_low_pct  # never settled against it
    assert -holdout.ci_high_pct > 0.25 * 5.42  # wholly above a quarter of the smaller win


def test_a_win_that_grows_with_an_option_stands_once_its_twin_of_new_content_keeps_it() -> None:
    verdict = decide(one_pass(), RULES)
    assert verdict.verdict == "accepted", verdict.reasons
    assert verdict.rests_on == "reviews"
    held = {h.reading.workload: h for h in held_readings(one_pass(), RULES, "reviews") or []}
    assert held["tickets-holdout"].win.workload == "novel"
    assert held["reviews~twin"].win.workload == "reviews"


def test_with_a_twin_of_the_same_content_the_holdout_is_held_against_the_win_itself() -> None:
    """A table keyed by content answers a copy-twin, so the holdout is the only unseen evidence
    of the -23 % win: a quarter of it, which this reading never settles."""
    verdict = decide(one_pass(twin_seen=True), RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(UNRESOLVED), verdict.reasons
    assert "tickets-holdout" in verdict.reasons[0]
    assert "of reviews's 23.29%" in verdict.reasons[0]


def test_without_a_twin_reading_the_holdout_is_held_against_the_win_itself() -> None:
    verdict = decide(one_pass(twin=False), RULES)
    assert verdict.verdict == "inconclusive"
    assert "against 5.82%" in verdict.reasons[0]


def test_a_stored_answer_for_one_input_beside_a_small_real_win_is_caught_through_a_copy_twin() -> (
    None
):
    """Answers kept for `reviews` by content (its copy-twin answered too) and a real -5 % on
    `novel`: the smaller win must not lower the holdout's bar."""
    found = gates_passed(
        reading("reviews", -35.0, tier="representative"),
        reading("novel", -5.0, tier="representative", seed=3),
        reading("reviews~twin", -34.0, tier="holdout", seed=1),
        reading("tickets-holdout", -1.5, tier="holdout", seed=2),
        seen=("reviews~twin",),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT), verdict.reasons
    assert "tickets-holdout -1.50%" in verdict.reasons[0]


def test_a_holdout_that_reads_nothing_stays_a_win_that_does_not_carry_over() -> None:
    """Even the smallest win's quarter lies above a holdout that gained nothing."""
    found = gates_passed(
        reading("reviews", -35.0, tier="representative"),
        reading("novel", -8.0, tier="representative", seed=3),
        reading("reviews~twin", -34.0, tier="holdout", seed=1),
        reading("tickets-holdout", 0.0, tier="holdout", seed=2),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT), verdict.reasons
    assert "against 2.00% (of novel's 8.00%)" in verdict.reasons[0]


def test_a_representative_workload_below_the_floor_does_not_lower_the_bar() -> None:
    found = gates_passed(
        reading("reviews", -24.0, tier="representative"),
        reading("novel", -1.0, tier="representative", seed=3),
        reading("reviews~twin", -23.0, tier="holdout", seed=1),
        reading("tickets-holdout", -2.0, tier="holdout", seed=2),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert "against 6.00% (of reviews's 24.00%)" in verdict.reasons[0]
