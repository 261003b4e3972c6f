from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from speedproof.corpus.errors import CorpusError, LeakageError, SplitBoundaryError
from speedproof.corpus.generate import TrustedPair
from speedproof.corpus.prompts import build_messages, canonical_patch
from speedproof.corpus.sft import SftConfig, build_sft, parse_focus
from speedproof.corpus.splits import load_all
from speedproof.functions.case import Case, model_view
from support.corpus import unverified_folder


def _turn(pair: TrustedPair) -> dict[str, Any]:
    return {
        "kind": "turn",
        "case_id": pair.case.id,
        "family": pair.case.family,
        "template": pair.case.template,
        "patch": canonical_patch(pair.case.reference_source, pair.fast_source),
    }


@pytest.fixture()
def corpus(tmp_path: Path) -> tuple[dict[str, list[Case]], list[TrustedPair]]:
    pairs = unverified_folder(tmp_path)
    return load_all(tmp_path), pairs


def test_rows_hold_the_exact_one_shot_context_and_the_canonical_patch(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    train = [p for p in pairs if p.split == "train"]
    rows = build_sft([_turn(p) for p in train], splits, SftConfig())
    assert len(rows) == len(train)
    by_id = {p.case.id: p for p in train}
    for row in rows:
        pair = by_id[row["case_id"]]
        context = [m.model_dump() for m in build_messages(model_view(pair.case))]
        assert row["messages"][:2] == context
        assert row["messages"][2]["role"] == "assistant"
        assert row["messages"][2]["content"].startswith("<<<<<<< SEARCH\n")


@pytest.mark.parametrize("split", ["dev", "frozen_seen", "frozen_heldout"])
def test_a_turn_of_a_dev_or_frozen_case_is_refused_before_any_weighting(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]], split: str
) -> None:
    splits, pairs = corpus
    outsider = next(p for p in pairs if p.split == split)
    turns = [_turn(p) for p in pairs if p.split == "train"] + [_turn(outsider)]
    with pytest.raises(SplitBoundaryError, match=outsider.case.id):
        build_sft(turns, splits, SftConfig(focus={outsider.case.family: 3}))


def test_a_replayed_row_of_a_frozen_case_is_refused(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    train = [_turn(p) for p in pairs if p.split == "train"]
    frozen = next(p for p in pairs if p.split == "frozen_seen")
    replay = [{"case_id": frozen.case.id, "family": frozen.case.family, "messages": []}]
    with pytest.raises(SplitBoundaryError, match="replay"):
        build_sft(train, splits, SftConfig(replay_ratio=0.4), replay)


def test_focused_copies_add_n_copies_of_each_row_of_that_family(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    turns = [_turn(p) for p in pairs if p.split == "train"]
    rows = build_sft(turns, splits, SftConfig(focus={"complement_lookup": 3}))
    per_family = Counter(t["family"] for t in turns)
    sources = Counter((r["family"], r["source"]) for r in rows)
    assert sources[("complement_lookup", "focus")] == 3 * per_family["complement_lookup"]
    assert len(rows) == len(turns) + 3 * per_family["complement_lookup"]


def test_replay_makes_up_the_requested_share_of_the_mixture(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    turns = [_turn(p) for p in pairs if p.split == "train"]
    earlier = build_sft(turns[:4], splits, SftConfig())
    rows = build_sft(turns, splits, SftConfig(replay_ratio=0.4), earlier)
    replayed = sum(1 for r in rows if r["source"] == "replay")
    assert replayed / len(rows) == pytest.approx(0.4, abs=0.03)


def test_a_replayed_row_holding_a_dev_source_under_a_train_id_fails_the_audit(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    train = [p for p in pairs if p.split == "train"]
    dev = next(p for p in pairs if p.split == "dev")
    smuggled = build_sft([_turn(train[0])], splits, SftConfig())[0]
    dev_context = build_messages(model_view(dev.case))[1].content
    smuggled["messages"][1]["content"] = dev_context
    with pytest.raises(LeakageError, match=r"leak \[ast_hash\]"):
        build_sft([_turn(p) for p in train], splits, SftConfig(replay_ratio=0.2), [smuggled])


def test_the_same_inputs_and_seed_give_the_same_mixture(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    splits, pairs = corpus
    turns = [_turn(p) for p in pairs if p.split == "train"]
    config = SftConfig(focus={"stable_dedup": 2}, seed=5)
    assert build_sft(turns, splits, config) == build_sft(turns, splits, config)


def test_focus_arguments_are_parsed_and_bad_ones_refused(
    corpus: tuple[dict[str, list[Case]], list[TrustedPair]],
) -> None:
    assert parse_focus(["running_aggregate=4", "sliding_window=2"]) == {
        "running_aggregate": 4,
        "sliding_window": 2,
    }
    with pytest.raises(CorpusError, match="family=copies"):
        parse_focus(["running_aggregate"])
    splits, _ = corpus
    with pytest.raises(CorpusError, match="not seen families"):
        build_sft([], splits, SftConfig(focus={"indexed_lookup": 2}))
