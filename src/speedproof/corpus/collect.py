"""Teacher collection: ask a provider to speed up train cases; keep only turns that passed.

For each case: up to `attempts` tries. A failed try is followed by feedback naming only the
failure category (never an input, an output or the verifier's detail text). The answers are
verified on a cluster, several cases at a time (`dialogue.converse`). The output is an
append-only JSON-lines file, fsync'd after each case and written by the driver alone, with one
row per finished case, in case order:
  {"kind": "turn", ...}       the passing answer, its conversation and provenance
  {"kind": "exhausted", ...}  every attempt failed; the categories, no answer text
A resumed run skips every case that already has a row, so an interrupted run never duplicates
rows. An infrastructure verdict stops the run (the case stays unfinished and is retried on the
next run): a broken verifier says nothing about the teacher.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speedproof.agents.providers.base import Provider
from speedproof.cluster.jobs import Cluster
from speedproof.cluster.spec import cluster_scope
from speedproof.corpus.dialogue import Dialogue, Rules, Turn, converse
from speedproof.corpus.errors import SplitBoundaryError
from speedproof.corpus.grading import Judged
from speedproof.corpus.jsonl import append_rows, drop_torn_tail, read_rows
from speedproof.corpus.prompts import canonical_patch
from speedproof.functions.case import Case


@dataclass(frozen=True)
class CollectConfig:
    attempts: int = 3
    role: str = "teacher"
    limit: int | None = None  # at most this many new cases in this run


@dataclass
class CollectStats:
    skipped: int = 0
    passed: int = 0
    exhausted: int = 0
    attempts: int = 0
    categories: dict[str, int] = field(default_factory=dict)


def done_case_ids(path: Path) -> set[str]:
    """Case ids that already have a row (a torn last line is dropped first)."""
    drop_torn_tail(path)
    return {str(row["case_id"]) for row in read_rows(path)}


def _turn_row(case: Case, provider_name: str, turn: Turn) -> dict[str, Any]:
    judged = turn.judged
    assert judged.candidate_source is not None
    return {
        "kind": "turn",
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "provider": provider_name,
        "model": turn.completion.model,
        "attempt": turn.attempt,
        "messages": [m.model_dump() for m in turn.messages],
        "answer": turn.completion.text,
        "patch": canonical_patch(case.reference_source, judged.candidate_source),
        "verifier_digest": judged.verifier_digest,
        "reward": judged.reward,
        "ref_ir": judged.ref_ir,
        "cand_ir": judged.cand_ir,
        "timestamp": time.time(),
    }


def _case_row(dialogue: Dialogue, provider_name: str, config: CollectConfig) -> dict[str, Any]:
    case, last = dialogue.case, dialogue.turns[-1]
    if last.judged.category == "passed":
        return _turn_row(case, provider_name, last)
    return {
        "kind": "exhausted",
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "provider": provider_name,
        "attempts": config.attempts,
        "categories": [turn.judged.category for turn in dialogue.turns],
        "timestamp": time.time(),
    }


def _is_infrastructure(judged: Judged) -> bool:
    return judged.category == "infrastructure"


def _passed(judged: Judged) -> bool:
    return judged.category == "passed"


def collect(
    cases: Sequence[Case],
    provider: Provider,
    out: Path,
    config: CollectConfig,
    *,
    provider_name: str,
    train_ids: set[str],
    progress: Callable[[Case, dict[str, Any]], None] | None = None,
    cluster: Cluster | None = None,
) -> CollectStats:
    """Run the teacher over `cases` (all must be train cases), appending to `out`.

    The answers are verified on `cluster` (two local worker processes when None), the
    conversations of several cases at once (`dialogue.converse`); rows are written here.
    """
    outside = sorted(c.id for c in cases if c.id not in train_ids)
    if outside:
        raise SplitBoundaryError(
            f"collection runs on train cases only; {len(outside)} are not in train: "
            + ", ".join(outside[:5])
        )
    done = done_case_ids(out)
    stats = CollectStats(skipped=sum(1 for case in cases if case.id in done))
    todo = [case for case in cases if case.id not in done][: config.limit]

    def finished(dialogue: Dialogue) -> None:
        row = _case_row(dialogue, provider_name, config)
        append_rows(out, [row])
        stats.attempts += len(dialogue.turns)
        for turn in dialogue.turns:
            category = turn.judged.category
            stats.categories[category] = stats.categories.get(category, 0) + 1
        if row["kind"] == "turn":
            stats.passed += 1
        else:
            stats.exhausted += 1
        if progress:
            progress(dialogue.case, row)

    rules = Rules(config.attempts, config.role, final=_passed, halt=_is_infrastructure)
    if todo:
        with cluster_scope(cluster) as running:
            converse(todo, provider, rules, running, finished)
    return stats


def read_turns(path: Path) -> list[dict[str, Any]]:
    """The passing turns of a collection file."""
    return [row for row in read_rows(path) if row.get("kind") == "turn"]
