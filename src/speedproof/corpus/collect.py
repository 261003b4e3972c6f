"""Teacher collection: ask a provider to speed up train cases; keep only turns that passed.

For each case: up to `attempts` tries. A failed try is followed by feedback naming only the
failure category (never an input, an output or the verifier's detail text). The output is an
append-only JSON-lines file, fsync'd after each case, with one row per finished case:
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

from speedproof.agents.providers.base import ChatMessage, Provider
from speedproof.corpus.errors import SplitBoundaryError
from speedproof.corpus.jsonl import append_rows, drop_torn_tail, read_rows
from speedproof.corpus.judge import Judged, judge_answer
from speedproof.corpus.prompts import build_messages, canonical_patch, retry_messages
from speedproof.errors import InfrastructureError
from speedproof.functions.case import Case, model_view


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


def _turn_row(
    case: Case,
    provider_name: str,
    model: str,
    attempt: int,
    messages: list[ChatMessage],
    answer: str,
    judged: Judged,
) -> dict[str, Any]:
    assert judged.candidate_source is not None
    return {
        "kind": "turn",
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "provider": provider_name,
        "model": model,
        "attempt": attempt,
        "messages": [m.model_dump() for m in messages],
        "answer": answer,
        "patch": canonical_patch(case.reference_source, judged.candidate_source),
        "verifier_digest": judged.verifier_digest,
        "reward": judged.reward,
        "ref_ir": judged.ref_ir,
        "cand_ir": judged.cand_ir,
        "timestamp": time.time(),
    }


def _collect_case(
    case: Case, provider: Provider, provider_name: str, config: CollectConfig, stats: CollectStats
) -> dict[str, Any]:
    messages = build_messages(model_view(case))
    categories: list[str] = []
    for attempt in range(1, config.attempts + 1):
        completion = provider.complete(messages, role=config.role)
        judged = judge_answer(case, completion.text)
        stats.attempts += 1
        stats.categories[judged.category] = stats.categories.get(judged.category, 0) + 1
        if judged.category == "infrastructure":
            raise InfrastructureError(
                f"the verifier could not judge case {case.id} ({judged.status}): {judged.detail}"
            )
        if judged.category == "passed":
            return _turn_row(
                case, provider_name, completion.model, attempt, messages, completion.text, judged
            )
        categories.append(judged.category)
        messages = retry_messages(messages, completion.text, judged.category)
    return {
        "kind": "exhausted",
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "provider": provider_name,
        "attempts": config.attempts,
        "categories": categories,
        "timestamp": time.time(),
    }


def collect(
    cases: Sequence[Case],
    provider: Provider,
    out: Path,
    config: CollectConfig,
    *,
    provider_name: str,
    train_ids: set[str],
    progress: Callable[[Case, dict[str, Any]], None] | None = None,
) -> CollectStats:
    """Run the teacher over `cases` (all must be train cases), appending to `out`."""
    outside = sorted(c.id for c in cases if c.id not in train_ids)
    if outside:
        raise SplitBoundaryError(
            f"collection runs on train cases only; {len(outside)} are not in train: "
            + ", ".join(outside[:5])
        )
    done = done_case_ids(out)
    stats = CollectStats()
    new = 0
    for case in cases:
        if case.id in done:
            stats.skipped += 1
            continue
        if config.limit is not None and new >= config.limit:
            break
        row = _collect_case(case, provider, provider_name, config, stats)
        append_rows(out, [row])
        done.add(case.id)
        new += 1
        if row["kind"] == "turn":
            stats.passed += 1
        else:
            stats.exhausted += 1
        if progress:
            progress(case, row)
    return stats


def read_turns(path: Path) -> list[dict[str, Any]]:
    """The passing turns of a collection file."""
    return [row for row in read_rows(path) if row.get("kind") == "turn"]
