"""The carry-over rule: a win that does not reappear on every unseen workload does not stand."""

from __future__ import annotations

from dataclasses import replace

from speedproof.judge.policy.decide import carry_over_settled, decide
from speedproof.judge.policy.evidence import Evidence
from speedproof.manifest_loading import parse_manifest
from support.carry_over import RULES, reading
from support.evidence import gates_passed


def stored_answer() -> Evidence:
    """What the stored-answer attack measured on textstat: -85 % seen, nothing unseen."""
    return gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("novel~twin", 0.5, tier="holdout", seed=1),
        reading("tickets-holdout", -0.5, tier="holdout", seed=2),
    )


def test_a_win_that_vanishes_on_every_unseen_workload_is_inconclusive_and_says_why() -> None:
    verdict = decide(stored_answer(), RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(
        "the win does not carry over to inputs the candidate has not seen"
    )
    assert "even the interval's best end lies below that share" in verdict.reasons[0]
    assert "novel~twin +0.50%" in verdict.reasons[0]


def test_a_win_that_keeps_half_on_its_twin_and_a_quarter_on_every_holdout_stands() -> None:
    found = gates_passed(
        reading("novel", -30.0, tier="representative"),
        reading("novel~twin", -16.0, tier="holdout", seed=1),
        reading("tickets-holdout", -8.0, tier="holdout", seed=2),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "accepted"
    assert verdict.rests_on == "novel"


def test_a_win_that_keeps_less_than_half_on_its_own_twin_does_not_stand() -> None:
    found = gates_passed(
        reading("novel", -30.0, tier="representative"),
        reading("novel~twin", -14.0, tier="holdout", seed=1),
    )
    assert decide(found, RULES).verdict == "inconclusive"


def test_a_stored_answer_beside_a_real_speedup_elsewhere_is_held_against_its_own_twin() -> None:
    found = gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("reviews", -30.0, tier="representative", seed=3),
        reading("novel~twin", 0.0, tier="holdout", seed=1),
        reading("reviews~twin", -30.0, tier="holdout", seed=4),
        reading("tickets-holdout", -30.0, tier="holdout", seed=2),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert "reviews~twin" not in verdict.reasons[0]


def test_a_win_without_a_twin_is_held_against_every_unseen_workload() -> None:
    generated = reading("fresh", -30.0, tier="representative")
    carried = gates_passed(generated, reading("tickets-holdout", -10.0, tier="holdout", seed=2))
    assert decide(carried, RULES).verdict == "accepted"
    lost = gates_passed(generated, reading("tickets-holdout", -2.0, tier="holdout", seed=2))
    verdict = decide(lost, RULES)
    assert verdict.verdict == "inconclusive"
    assert "tickets-holdout -2.00%" in verdict.reasons[0]
    assert "against 7.50%" in verdict.reasons[0]


def test_a_win_marked_input_specific_is_held_against_its_own_twin_alone() -> None:
    """logstat's slow-report builder: -20 % on the big API day and its twin, nothing on a small
    holdout with few slow requests; the same marking does not let a stored answer through."""
    specific = replace(RULES, input_specific=("novel",))
    real = gates_passed(
        reading("novel", -20.0, tier="representative"),
        reading("novel~twin", -18.0, tier="holdout", seed=1),
        reading("tickets-holdout", 0.5, tier="holdout", seed=2),
    )
    assert decide(real, RULES).verdict == "inconclusive"
    assert decide(real, specific).verdict == "accepted"
    verdict = decide(stored_answer(), specific)
    assert verdict.verdict == "inconclusive"
    assert "novel~twin" in verdict.reasons[0]


def test_a_win_marked_input_specific_without_a_twin_keeps_its_accept() -> None:
    found = gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("tickets-holdout", -0.5, tier="holdout", seed=2),
    )
    assert decide(found, replace(RULES, input_specific=("novel",))).verdict == "accepted"


def test_without_unseen_readings_the_rule_has_nothing_to_say() -> None:
    found = gates_passed(reading("novel", -85.0, tier="representative"))
    assert decide(found, RULES).verdict == "accepted"


def test_a_fraction_of_zero_turns_the_rule_off() -> None:
    assert decide(stored_answer(), replace(RULES, carry_over_fraction=0.0)).verdict == "accepted"


def test_the_rule_never_turns_a_reject_or_an_inconclusive_into_anything_else() -> None:
    slower = gates_passed(
        reading("novel", 20.0, tier="representative"),
        reading("novel~twin", 0.0, tier="holdout", seed=1),
    )
    assert decide(slower, RULES).verdict == "rejected"
    flat = gates_passed(
        reading("novel", 0.0, tier="representative"),
        reading("novel~twin", 0.0, tier="holdout", seed=1),
    )
    assert decide(flat, RULES).verdict == "inconclusive"


def test_a_manifest_asks_a_quarter_on_holdouts_and_half_on_twins_by_default() -> None:
    text = (
        '[target]\nname = "t"\nlanguage = "command"\nprogram = "t"\n'
        '[tests]\nrunner = "command"\n'
        '[[workloads]]\nid = "a"\ninput_specific = true\n'
    )
    rules = parse_manifest(text).rules()
    assert (rules.carry_over_fraction, rules.twin_carry_over_fraction) == (0.25, 0.5)
    assert rules.input_specific == ("a",)


def test_a_twin_that_clearly_keeps_the_win_settles_carry_over_after_five_pairs() -> None:
    found = gates_passed(
        reading("novel", -30.0, tier="representative"),
        reading("novel~twin", -29.0, tier="holdout", seed=1, runs=5, spread=3.0),
    )
    assert carry_over_settled(found, RULES, "novel")


def test_a_twin_that_clearly_loses_the_win_settles_carry_over_too() -> None:
    found = gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("novel~twin", 1.0, tier="holdout", seed=1, runs=5, spread=3.0),
    )
    assert carry_over_settled(found, RULES, "novel")


def test_a_twin_whose_interval_straddles_the_share_needed_is_measured_further() -> None:
    found = gates_passed(
        reading("novel", -30.0, tier="representative"),
        reading("novel~twin", -8.0, tier="holdout", seed=1, runs=5, spread=10.0),
    )
    assert not carry_over_settled(found, RULES, "novel")


def test_without_a_twin_reading_nothing_is_settled_yet() -> None:
    found = gates_passed(reading("novel", -30.0, tier="representative"))
    assert not carry_over_settled(found, RULES, "novel")


def test_a_rule_that_is_off_or_a_workload_marked_input_specific_needs_no_twin_pairs() -> None:
    found = gates_passed(reading("novel", -30.0, tier="representative"))
    assert carry_over_settled(found, replace(RULES, carry_over_fraction=0.0), "novel")
    assert carry_over_settled(found, replace(RULES, input_specific=("novel",)), "novel")


def test_a_table_answering_a_sixth_of_a_twin_is_not_accepted_when_load_lifts_its_reading() -> None:
    """logstat's per-target table answers 17.3 % of shop-day's twin; under load 4-6 the twin once
    read about a third of the -35 % win and the table was accepted under a quarter's bar."""
    found = gates_passed(
        reading("shop-day", -35.0, tier="representative"),
        reading("shop-day~twin", -11.0, tier="holdout", seed=1),
    )
    rules = parse_manifest(
        '[target]\nname = "t"\nlanguage = "command"\nprogram = "t"\n'
        '[tests]\nrunner = "command"\n[[workloads]]\nid = "shop-day"\n'
    ).rules()
    verdict = decide(found, rules)
    assert verdict.verdict == "inconclusive"
    assert "shop-day~twin -11.00%" in verdict.reasons[0]


def test_a_holdout_keeping_a_third_of_the_win_stands_where_a_twin_keeping_a_third_does_not() -> (
    None
):
    """textstat's tickets holdout keeps about a third of the stopword win: another input, where a
    real win may be smaller; a twin is the same shape, where a third is a table's share."""
    holdout = gates_passed(
        reading("novel", -45.0, tier="representative"),
        reading("tickets-holdout", -15.0, tier="holdout", seed=2),
    )
    assert decide(holdout, RULES).verdict == "accepted"
    twin = gates_passed(
        reading("novel", -45.0, tier="representative"),
        reading("novel~twin", -15.0, tier="holdout", seed=1),
    )
    verdict = decide(twin, RULES)
    assert verdict.verdict == "inconclusive"
    assert (
        "0.25 of each win" in verdict.reasons[0]
        and "0.5 on a workload's own twin" in (verdict.reasons[0])
    )


def test_a_real_win_whose_twin_keeps_four_fifths_of_it_stands_by_default() -> None:
    """The bundled speedups' twins kept 79-107 % of their wins (docs/adr/0030), sqlparse's 105 %
    and digraph's 82 %."""
    found = gates_passed(
        reading("shop-day", -30.0, tier="representative"),
        reading("shop-day~twin", -23.7, tier="holdout", seed=1, runs=10, spread=5.0),
    )
    rules = parse_manifest(
        '[target]\nname = "t"\nlanguage = "command"\nprogram = "t"\n'
        '[tests]\nrunner = "command"\n[[workloads]]\nid = "shop-day"\n'
    ).rules()
    assert decide(found, rules).verdict == "accepted"


def test_an_input_specific_win_is_held_against_its_own_twin_at_half_the_holdouts_share() -> None:
    """logstat's slow-report builder: its twin kept 24-40 % of an 18-21 % win on a quiet
    machine, where the other twins keep most of theirs; an eighth is its bar."""
    found = gates_passed(
        reading("novel", -20.0, tier="representative"),
        reading("novel~twin", -4.8, tier="holdout", seed=1),
    )
    assert decide(found, RULES).verdict == "inconclusive"
    assert decide(found, replace(RULES, input_specific=("novel",))).verdict == "accepted"
