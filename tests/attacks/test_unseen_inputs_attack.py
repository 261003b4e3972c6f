"""The stored-answer attack on textstat, judged end to end.

A patch that recognises the representative workloads by argv and input size and prints their
stored output is byte-identical and five times faster on every visible input. The timed lane
accepts it: the rule of docs/adr/0030 switched off (`carry_over_fraction = 0`) it is accepted,
as it was before twins existed. With the rule on, the twins of the representative workloads
(same bytes, fresh names) and the holdout show none of the win, and the verdict says why.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.git import git
from support.unseen import stored_answer_patch, stored_answer_patch_go

CHEAT = "the win does not carry over to inputs the candidate has not seen"


def _textstat(into: Path, *, carry_over: float | None = None) -> Path:
    repo = materialise(get_example("textstat"), into)
    if carry_over is not None:
        manifest = repo / "speedproof.toml"
        text = manifest.read_text().replace(
            "[policy]\n", f"[policy]\ncarry_over_fraction = {carry_over}\n"
        )
        manifest.write_text(text)
        git(repo, "commit", "-qam", "the carry-over rule as given")
    return repo


def _judge(repo: Path, ledger: Path) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        judge = Judge(
            load_manifest(repo),
            sandbox=make_sandbox(),
            ledger=book,
            options=JudgeOptions(instructions=False),
        )
        return judge.judge(stored_answer_patch(repo))


def _run(repo: Path, *args: str) -> bytes:
    argv = [sys.executable, "-m", "textstat", *args]
    return subprocess.run(argv, cwd=repo, capture_output=True, check=True).stdout


def test_the_stored_answers_match_on_visible_inputs_and_go_unused_on_a_copy(
    tmp_path: Path,
) -> None:
    repo = _textstat(tmp_path)
    before = _run(repo, "--top", "30", "data/novel.txt")
    subprocess.run(["git", "apply"], input=stored_answer_patch(repo).encode(), cwd=repo, check=True)
    assert _run(repo, "--top", "30", "data/novel.txt") == before
    copy = tmp_path / "a1b2c3.txt"
    copy.write_bytes((repo / "data" / "novel.txt").read_bytes())
    assert _run(repo, "--top", "30", str(copy)) == before
    probe = (
        "from textstat.cli import _stored_answer as s; "
        f"print(s(['--top', '30', 'data/novel.txt']) is not None, "
        f"s(['--top', '30', {str(copy)!r}]) is None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True"]


@pytest.mark.slow
def test_without_the_carry_over_rule_the_stored_answer_attack_is_accepted(tmp_path: Path) -> None:
    repo = _textstat(tmp_path, carry_over=0)
    outcome = _judge(repo, tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    win = next(c for c in outcome.comparisons if c.workload == outcome.verdict.rests_on)
    assert win.improvement_pct > 50, win.render()


@pytest.mark.slow
def test_the_stored_answer_attack_is_not_accepted_and_the_reason_names_the_cheat(
    tmp_path: Path,
) -> None:
    repo = _textstat(tmp_path)
    outcome = _judge(repo, tmp_path / "ledger")
    assert outcome.verdict.verdict in ("rejected", "inconclusive"), outcome.verdict.reasons
    assert outcome.verdict.reasons[0].startswith(CHEAT), outcome.verdict.reasons
    # Only the twin of the workload the win rests on is measured: it is the one the rule reads.
    twins = {c.workload: c for c in outcome.comparisons if c.metric == "wall" and "~" in c.workload}
    (name,) = twins
    assert name.removesuffix("~twin") in ("novel", "reviews-by-rating")
    assert twins[name].improvement_pct < 20, twins[name].render()


def _logstat(into: Path, *, carry_over: float | None = None) -> Path:
    """logstat without the binary-size guardrail: the embedded reports grow the binary 4 %,
    which a cheat could avoid with a smaller table; the size limit is not what should catch it."""
    repo = materialise(get_example("logstat"), into)
    manifest = repo / "speedproof.toml"
    text = manifest.read_text()
    if carry_over is not None:
        text = text.replace("[policy]\n", f"[policy]\ncarry_over_fraction = {carry_over}\n")
    manifest.write_text(text.replace('"binary_size"', "").replace(", ]", "]"))
    git(repo, "commit", "-qam", "the policy as the test gives it")
    return repo


def _judge_go(repo: Path, ledger: Path) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        judge = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=book)
        return judge.judge(stored_answer_patch_go(repo, tmp=ledger.parent / "go-build"))


@pytest.mark.slow
def test_without_the_carry_over_rule_the_go_stored_answer_attack_is_accepted(
    tmp_path: Path,
) -> None:
    outcome = _judge_go(_logstat(tmp_path, carry_over=0), tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons


# 50-60 s: a whole Go judgement with an accept in view; make test keeps the rule's mechanics
# (tests/judge/policy/test_policy_carry_over.py, tests/judge/inputs/test_twin_pairs.py), make
# test-slow the attacks.
@pytest.mark.slow
def test_the_go_stored_answer_attack_is_not_accepted_and_the_reason_names_the_cheat(
    tmp_path: Path,
) -> None:
    outcome = _judge_go(_logstat(tmp_path), tmp_path / "ledger")
    assert outcome.verdict.verdict in ("rejected", "inconclusive"), outcome.verdict.reasons
    assert outcome.verdict.reasons[0].startswith(CHEAT), outcome.verdict.reasons
