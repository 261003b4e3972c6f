"""The carry-over rule consults every reading with unseen content and decides only from evidence.

A win must reappear on every reading whose input the candidate cannot have seen: a twin made of
new content, a holdout, a generated holdout. A twin of the same bytes (`twin = "copy"`) or of
19 lines in 20 (`"lines"`) is answered by a table keyed on content, so it is seen input: it never
shows that a win carries over, and the notes say so. "Does not carry over" needs an unseen
reading whose interval lies wholly below the share of the win that must reappear; a reading too
noisy to tell is measured further, and when no pairs are left it is "not resolved".
"""

from __future__ import annotations

from speedproof.judge.policy.carry_over import CHEAT, UNRESOLVED
from speedproof.judge.policy.decide import carry_over_settled, decide
from speedproof.judge.policy.evidence import Evidence
from support.carry_over import RULES, reading
from support.evidence import gates_passed


def test_a_stored_answer_whose_new_content_twin_reads_nothing_is_inconclusive_naming_it() -> None:
    found = gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("novel~twin", 0.0, tier="holdout", seed=1),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT)
    assert "novel~twin" in verdict.reasons[0]
    assert carry_over_settled(found, RULES, "novel")


def test_a_win_its_twin_keeps_but_a_holdout_does_not_is_inconclusive_naming_the_holdout() -> None:
    found = gates_passed(
        reading("novel", -35.0, tier="representative"),
        reading("novel~twin", -34.0, tier="holdout", seed=1),
        reading("tickets-holdout", 0.0, tier="holdout", seed=2),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT)
    assert "tickets-holdout" in verdict.reasons[0]
    assert "novel~twin" not in verdict.reasons[0]


def _noisy_twin() -> Evidence:
    """A real -11.5 % win whose twin, 10 runs a side at 15 % noise, read +1.05 %: its interval
    reaches both no change and the whole win."""
    return gates_passed(
        reading("novel", -11.5, tier="representative"),
        reading("novel~twin", 1.05, tier="holdout", seed=1, runs=10, spread=15.0),
    )


def test_an_unseen_reading_too_noisy_to_tell_is_not_called_a_win_that_does_not_carry_over() -> None:
    found = _noisy_twin()
    twin = next(c for c in found.comparisons if c.workload == "novel~twin")
    assert twin.ci_low_pct < -11.5 and twin.ci_high_pct > 0  # reaches the win and no change
    assert not carry_over_settled(found, RULES, "novel")
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(UNRESOLVED), verdict.reasons
    assert "novel~twin" in verdict.reasons[0] and "n=10" in verdict.reasons[0]
    assert CHEAT not in verdict.reasons[0]


def test_a_twin_of_the_same_content_that_keeps_the_win_does_not_carry_it() -> None:
    # A table keyed by content answers a copy (and 19 lines in 20): the twin's -35 % is no
    # evidence. The holdout, which no table knows, decides, and the notes say why.
    found = gates_passed(
        reading("novel", -35.0, tier="representative"),
        reading("novel~twin", -35.0, tier="holdout", seed=1),
        reading("tickets-holdout", 0.0, tier="holdout", seed=2),
        seen=("novel~twin",),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT) and "tickets-holdout" in verdict.reasons[0]
    assert any("novel~twin" in n and "seen input" in n for n in verdict.notes), verdict.notes


def test_a_win_read_only_on_twins_of_the_same_content_is_not_resolved_and_says_so() -> None:
    # A content-keyed table answers a copy as well as the original: a win shown there alone
    # could be stored, so the accept waits for input the candidate has not seen.
    found = gates_passed(
        reading("novel", -35.0, tier="representative"),
        reading("novel~twin", -35.0, tier="holdout", seed=1),
        seen=("novel~twin",),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert "was read only on novel~twin (seen input)" in verdict.reasons[0], verdict.reasons
    assert any("novel~twin" in n and "seen input" in n for n in verdict.notes), verdict.notes


def test_a_twin_of_the_same_content_that_loses_the_win_still_blocks_the_accept() -> None:
    # The same bytes under a fresh name lost the win: the candidate recognises names or argv.
    found = gates_passed(
        reading("novel", -85.0, tier="representative"),
        reading("novel~twin", 0.5, tier="holdout", seed=1),
        reading("tickets-holdout", -80.0, tier="holdout", seed=2),
        seen=("novel~twin",),
    )
    verdict = decide(found, RULES)
    assert verdict.verdict == "inconclusive"
    assert verdict.reasons[0].startswith(CHEAT) and "novel~twin" in verdict.reasons[0]


def test_every_unseen_reading_must_settle_before_carry_over_is_settled() -> None:
    twin_clear = reading("novel~twin", -30.0, tier="holdout", seed=1)
    holdout_wide = reading("tickets-holdout", -5.0, tier="holdout", seed=2, runs=5, spread=20.0)
    found = gates_passed(reading("novel", -30.0, tier="representative"), twin_clear, holdout_wide)
    assert not carry_over_settled(found, RULES, "novel")
    holdout_tight = reading("tickets-holdout", -29.0, tier="holdout", seed=2)
    settled = gates_passed(
        reading("novel", -30.0, tier="representative"), twin_clear, holdout_tight
    )
    assert carry_over_settled(settled, RULES, "novel")
    assert decide(settled, RULES).verdict == "accepted"
