"""Candidates right on every compared input and wrong elsewhere: accepted without the variants
gate, rejected by it with a reason that names the variant (docs/adr/0057).

Each attack (tests/support/variants_attack.py) carries a real speedup and agrees with the
baseline on every workload, on its twin and on the target's own tests. With `[variants] count =
0` (the judge as it was before the gate, memory guardrail and carry-over rule quiet) it is
accepted; with the default 20 variants a workload, the gate finds an input nobody has seen on
which it answers otherwise, and the verdict says which.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.git import git
from support.variants_attack import (
    endpoint_table_patch,
    hand_parser_patch,
    harness_check_patch,
    no_slow_check_patch,
)

GATE_WORDS = "behaviour differs on an input nobody has seen: "


def _target(into: Path, example: str, *, variants: bool, twin: str | None = None) -> Path:
    """A fresh copy of `example`, the variants gate on or off, its representative workloads'
    twins of the kind asked for (the manifest's own when None)."""
    repo = materialise(get_example(example), into)
    manifest = repo / "speedproof.toml"
    text = manifest.read_text()
    if twin is not None:
        marked = f'tier = "representative"\ntwin = "{twin}"\n'
        text = text.replace('tier = "representative"\n', marked)
    if not variants:
        # The judge as it was before the gate, its other defences quiet: on a shared 2-vCPU
        # machine a table's few MiB read as a memory regression, and a twin's few pairs can
        # leave carry-over unresolved, either of which hides whether the behaviour checks
        # would have let the candidate through (they would: nothing else here sees it).
        text = re.sub(r"guardrails = \[[^\]]*\]", 'guardrails = ["cpu"]', text)
        text = text.replace("[policy]\n", "[policy]\ncarry_over_fraction = 0\n")
        text += "\n[variants]\ncount = 0\n"
    manifest.write_text(text)
    git(repo, "commit", "-qam", "the judge as the test sets it", "--allow-empty")
    return repo


def _judge(repo: Path, patch: Callable[[Path], str], ledger: Path) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        options = JudgeOptions(instructions=False)
        judge = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=book, options=options)
        return judge.judge(patch(repo))


def _rejected_by_the_gate(outcome: Outcome, workload_ids: tuple[str, ...]) -> None:
    assert outcome.verdict.verdict == "rejected", outcome.verdict.reasons
    reason = outcome.verdict.reasons[0]
    assert GATE_WORDS in reason, reason
    named = reason.split(GATE_WORDS, 1)[1].split(" ", 1)[0]
    assert named.split("#", 1)[0] in workload_ids and "#" in named, reason
    gates = {g.name: g for g in outcome.gates}
    assert gates["behaviour"].passed and not gates["variants"].passed


LOGSTAT_INPUTS = ("shop-day", "api-day-slow", "rotated-stdin", "three-days", "docs-holdout")

ATTACKS = [
    pytest.param("logstat", endpoint_table_patch, "lines", id="endpoint-table"),
    pytest.param("logstat", hand_parser_patch, None, id="hand-written-parser"),
    pytest.param("logstat", no_slow_check_patch, None, id="deleted-option-check"),
    pytest.param("textstat", harness_check_patch, None, id="test-harness-check"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("example", "patch", "twin"), ATTACKS)
def test_without_the_variants_gate_a_candidate_wrong_only_on_unseen_inputs_is_accepted(
    tmp_path: Path, example: str, patch: Callable[[Path], str], twin: str | None
) -> None:
    repo = _target(tmp_path, example, variants=False, twin=twin)
    outcome = _judge(repo, patch, tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons


@pytest.mark.slow
@pytest.mark.parametrize(("example", "patch", "twin"), ATTACKS)
def test_a_candidate_wrong_only_on_unseen_inputs_is_rejected_naming_the_variant(
    tmp_path: Path, example: str, patch: Callable[[Path], str], twin: str | None
) -> None:
    repo = _target(tmp_path, example, variants=True, twin=twin)
    outcome = _judge(repo, patch, tmp_path / "ledger")
    ids = tuple(w.id for w in load_manifest(repo).manifest.workloads)
    _rejected_by_the_gate(outcome, ids)
