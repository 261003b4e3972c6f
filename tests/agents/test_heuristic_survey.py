"""The survey a campaign records for each hot function: every rule's outcome in words, the one
that writes a rewrite saying what it would do, the others why they do not."""

from __future__ import annotations

from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Subject
from speedproof.agents.heuristic.survey import ALL_RULES, survey
from support.example_views import python_view
from support.paths import EXAMPLES


def test_every_rule_answers_for_a_hot_function_and_the_one_that_rewrites_says_how() -> None:
    view = python_view("textstat/words.py", "textstat.words.is_stopword")
    text = (EXAMPLES / "textstat" / view["file"]).read_text()
    subject = Subject(
        view["name"],
        view["file"],
        "python",
        view["source"],
        view["start_line"],
        view["end_line"],
        text,
    )
    outcomes = survey(subject)
    assert [o.rule for o in outcomes] == list(rules.rule_ids("python"))
    proposing = [o for o in outcomes if o.proposed]
    assert [o.rule for o in proposing] == ["py-frozenset-constant"]
    assert "358-element" in proposing[0].reason
    assert all(o.reason for o in outcomes)


def test_a_function_missing_from_its_file_is_one_outcome_for_every_rule() -> None:
    subject = Subject("m.gone", "m.py", "python", "def gone():\n    pass\n", 1, 2, "x = 1\n")
    (outcome,) = survey(subject)
    assert outcome.rule == ALL_RULES and not outcome.proposed
    assert outcome.reason == "m.gone is not found in its file, or the text does not parse"
    other = Subject("m.f", "m.rb", "ruby", "def f; end\n", 1, 1, "def f; end\n")  # type: ignore[arg-type]
    assert "cover Python and Go, not 'ruby'" in survey(other)[0].reason
