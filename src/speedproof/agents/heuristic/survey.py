"""Every rule's outcome on one hot function, in words: the rewrite it writes, or why it writes none.

A campaign with the heuristic proposer records this for each hot function it profiles, so a
report can say why nothing was proposed: "no regexp compiled inside the function from a
constant pattern", "no call in report.go passes os.Stdout as w", "the key calls `lookup`,
which may have effects". The rules run exactly as the optimizer runs them (the whole file
given), and a rule's own `explain` wins over the generic "not found" line.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from speedproof.agents.heuristic.go_facts import parse_unit as parse_go
from speedproof.agents.heuristic.py_facts import parse_unit as parse_python
from speedproof.agents.heuristic.rules import GO_RULES, PYTHON_RULES, Rule, U
from speedproof.agents.heuristic.subject import RewriteDeclined, Subject

ALL_RULES = ""  # the rule id of an outcome that holds for every rule


@dataclass(frozen=True)
class RuleOutcome:
    """`rule` writes a rewrite (`proposed`, its hypothesis as the reason) or declines (why)."""

    rule: str
    proposed: bool
    reason: str


def survey(subject: Subject) -> list[RuleOutcome]:
    """Each rule's outcome on `subject`, in registry order; one outcome for every rule when
    the function cannot be read at all."""
    if subject.language == "python":
        python = parse_python(subject)
        if python is not None:
            return [_outcome(rule, python) for rule in PYTHON_RULES]
    elif subject.language == "go":
        go = parse_go(subject)
        if go is not None:
            return [_outcome(rule, go) for rule in GO_RULES]
    else:
        reason = f"the heuristic rules cover Python and Go, not {subject.language!r}"
        return [RuleOutcome(ALL_RULES, False, reason)]
    where = "its file" if subject.file_text is not None else "the text shown"
    reason = f"{subject.name} is not found in {where}, or the text does not parse"
    return [RuleOutcome(ALL_RULES, False, reason)]


def _outcome(rule: Rule[U], unit: U) -> RuleOutcome:
    try:
        proposal = rule.propose(unit)
        explained = None if proposal is not None or rule.explain is None else rule.explain(unit)
    except RewriteDeclined as err:
        return RuleOutcome(rule.id, False, f"the rewrite cannot be written faithfully: {err}")
    except cst.ParserSyntaxError:
        return RuleOutcome(rule.id, False, "the rewritten file does not parse")
    if proposal is not None:
        return RuleOutcome(rule.id, True, proposal.answer.hypothesis)
    if explained:
        return RuleOutcome(rule.id, False, explained)
    finding = rule.find(unit)
    if finding is None:
        return RuleOutcome(rule.id, False, f"not found: {rule.looks_for}")
    return RuleOutcome(
        rule.id,
        False,
        f"{finding.evidence}, but the rule cannot show that a rewrite keeps the output",
    )
