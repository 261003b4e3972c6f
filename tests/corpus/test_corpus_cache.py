from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.corpus.cache import VerificationCache, pair_key
from speedproof.corpus.errors import CorpusError
from speedproof.corpus.generate import build_pairs
from speedproof.corpus.jsonl import append_rows, read_rows
from support.corpus import SMALL


def test_the_key_changes_with_the_verifier_digest_the_sources_and_the_settings() -> None:
    pair = build_pairs(SMALL)[0]
    base = pair_key(pair.case, pair.fast_source, "v1", random_count=64, runs=2)
    assert base == pair_key(pair.case, pair.fast_source, "v1", random_count=64, runs=2)
    assert base != pair_key(pair.case, pair.fast_source, "v2", random_count=64, runs=2)
    assert base != pair_key(pair.case, pair.fast_source + "\n", "v1", random_count=64, runs=2)
    assert base != pair_key(pair.case, pair.fast_source, "v1", random_count=32, runs=2)
    other = build_pairs(SMALL)[1]
    assert base != pair_key(other.case, pair.fast_source, "v1", random_count=64, runs=2)


def test_a_recorded_verdict_is_found_again_after_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = VerificationCache(path)
    cache.record("k1", "case.a", {"status": "passed", "reward": 0.5})
    reopened = VerificationCache(path)
    assert len(reopened) == 1
    hit = reopened.get("k1")
    assert hit is not None and hit["case_id"] == "case.a" and hit["reward"] == 0.5
    assert reopened.get("k2") is None


def test_a_write_cut_short_by_a_crash_is_dropped_and_appending_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    VerificationCache(path).record("k1", "case.a", {"status": "passed"})
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "k2", "case_i')
    cache = VerificationCache(path)
    assert len(cache) == 1
    cache.record("k3", "case.c", {"status": "passed"})
    assert [row["key"] for row in read_rows(path)] == ["k1", "k3"]


def test_a_corrupt_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    append_rows(path, [{"key": "k1"}])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("not json\n")
    append_rows(path, [{"key": "k3"}])
    with pytest.raises(CorpusError, match=r"cache\.jsonl:2"):
        VerificationCache(path)
