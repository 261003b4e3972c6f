"""Teacher collection with replayed answers and the real verifier: only passing turns are kept,
retries see category-only feedback, and an interrupted run resumes without duplicate rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.agents.providers.base import ChatMessage
from speedproof.agents.providers.replay import ReplayMissing, ReplayProvider, recorded_line
from speedproof.corpus.collect import CollectConfig, collect, read_turns
from speedproof.corpus.errors import SplitBoundaryError
from speedproof.corpus.generate import TrustedPair
from speedproof.corpus.jsonl import read_rows
from speedproof.corpus.prompts import build_messages, canonical_patch, retry_messages
from speedproof.functions.case import model_view
from support.corpus import unverified_folder

MALFORMED = "Put the values in a set first, then look each query up."


def _context(pair: TrustedPair) -> list[ChatMessage]:
    return build_messages(model_view(pair.case))


def _recording(path: Path, *lines: str) -> ReplayProvider:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return ReplayProvider(path)


# About 16 s of real verifications; `make test-slow` (the fn pipeline test resumes a collection).
@pytest.mark.slow
def test_an_interrupted_collection_resumes_without_duplicating_rows(tmp_path: Path) -> None:
    pairs = unverified_folder(tmp_path / "corpus")
    first, retried, hopeless = [p for p in pairs if p.split == "train"][:3]
    cases = [first.case, retried.case, hopeless.case]
    train_ids = {p.case.id for p in pairs if p.split == "train"}
    out = tmp_path / "turns.jsonl"
    correct = canonical_patch(first.case.reference_source, first.fast_source)
    partial = _recording(
        tmp_path / "partial.jsonl",
        recorded_line("teacher", correct, messages=_context(first), model="teacher-1"),
    )
    config = CollectConfig(attempts=2)
    with pytest.raises(ReplayMissing):
        collect(cases, partial, out, config, provider_name="replay", train_ids=train_ids)
    assert [r["case_id"] for r in read_rows(out)] == [first.case.id]

    retry = retry_messages(_context(retried), MALFORMED, "formatting")
    fixed = canonical_patch(retried.case.reference_source, retried.fast_source)
    full = _recording(
        tmp_path / "full.jsonl",
        recorded_line("teacher", MALFORMED, messages=_context(retried)),
        recorded_line("teacher", fixed, messages=retry, model="teacher-1"),
        recorded_line("teacher", MALFORMED, messages=_context(hopeless)),
        recorded_line(
            "teacher",
            MALFORMED,
            messages=retry_messages(_context(hopeless), MALFORMED, "formatting"),
        ),
    )
    stats = collect(cases, full, out, config, provider_name="replay", train_ids=train_ids)
    assert (stats.skipped, stats.passed, stats.exhausted) == (1, 1, 1)
    rows = read_rows(out)
    assert [r["case_id"] for r in rows] == [c.id for c in cases]
    assert [r["kind"] for r in rows] == ["turn", "turn", "exhausted"]
    turn = rows[1]
    assert turn["attempt"] == 2 and turn["model"] == "teacher-1"
    assert turn["reward"] > 0 and turn["verifier_digest"] and turn["timestamp"] > 0
    assert turn["messages"][-1]["content"].startswith("Your answer held no SEARCH/REPLACE")
    assert rows[2]["categories"] == ["formatting", "formatting"] and "answer" not in rows[2]
    assert [t["case_id"] for t in read_turns(out)] == [first.case.id, retried.case.id]

    # Nothing is left: a third run asks the (empty) provider nothing and writes nothing.
    empty = _recording(tmp_path / "empty.jsonl")
    stats = collect(cases, empty, out, config, provider_name="replay", train_ids=train_ids)
    assert stats.skipped == 3 and len(read_rows(out)) == 3


def test_collection_refuses_cases_outside_train(tmp_path: Path) -> None:
    pairs = unverified_folder(tmp_path / "corpus")
    dev = next(p for p in pairs if p.split == "dev")
    train_ids = {p.case.id for p in pairs if p.split == "train"}
    provider = _recording(tmp_path / "r.jsonl")
    with pytest.raises(SplitBoundaryError, match=dev.case.id):
        collect(
            [dev.case], provider, tmp_path / "t.jsonl", CollectConfig(),
            provider_name="replay", train_ids=train_ids,
        )  # fmt: skip
    assert not (tmp_path / "t.jsonl").exists()
