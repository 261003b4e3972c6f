"""Helpers for the tests of the heuristic rules added beside the first ten: run the original and
the rewritten program for real and compare what they print, whatever kind of answer the rule
wrote (a whole function or search/replace blocks), and read a rule's decline reason as a
campaign records it. Imported by `test_heuristic_*` (pytest puts `tests/` on sys.path); it
holds no tests."""

from __future__ import annotations

from pathlib import Path

from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Proposal, Subject
from speedproof.agents.heuristic.survey import survey
from support.heuristic_go import go_run
from support.heuristic_go import rewritten as go_rewritten
from support.heuristic_python import rewritten as python_rewritten
from support.heuristic_python import run as python_run


def go_same_output(tmp_path: Path, text: str, found: Proposal) -> str:
    """The rewritten Go program (made through the campaign's edit path), after checking that it
    builds, runs and prints exactly what `text` prints."""
    new = go_rewritten(tmp_path, text, found)
    assert new != text
    before, after = go_run(tmp_path / "before", text), go_run(tmp_path / "after", new)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout) == (0, before.stdout), after.stderr
    return new


def python_same_output(tmp_path: Path, text: str, found: Proposal) -> str:
    """The rewritten Python program, after checking that it prints exactly what `text` prints
    (stdout and stderr)."""
    new = python_rewritten(tmp_path, text, found)
    assert new != text
    before, after = python_run(tmp_path, text, "before"), python_run(tmp_path, new, "after")
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout, after.stderr) == (0, before.stdout, before.stderr)
    return new


def decline_reason(subject: Subject, rule: str) -> str:
    """Why `rule` writes no rewrite for `subject`, in the words a campaign records."""
    (outcome,) = [o for o in survey(subject) if o.rule == rule]
    assert not outcome.proposed, outcome.reason
    return outcome.reason


def declined(subject: Subject, rule: str) -> str:
    """Why `rule` writes no rewrite for `subject`, in the words a campaign records, after
    checking that the rules' proposals for it hold none of `rule`'s either."""
    assert not [p for p in rules.proposals(subject) if p.answer.rule == rule]
    return decline_reason(subject, rule)
