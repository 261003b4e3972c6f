"""Generated pairs pass the real verifier (bwrap + valgrind) against their slow references; a
failing pair aborts generation; the cache makes a re-run skip verified pairs; the same seed gives
byte-identical split files. Each verification costs about 10 s of CPU (eight Cachegrind runs),
so the fast suite verifies a sample and the slow suite every family and the whole corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof.corpus.cache import VerificationCache
from speedproof.corpus.errors import PairRejected
from speedproof.corpus.families import FAMILIES
from speedproof.corpus.generate import (
    GenerationConfig,
    TrustedPair,
    build_pairs,
    stage,
    verify_pairs,
)
from speedproof.corpus.jsonl import read_rows, sha256_file
from speedproof.corpus.splits import MANIFEST, STAGING, split_path
from support.corpus import fn_app, wrong_constant

ONE_EACH = GenerationConfig(
    seed=21, sizes={"train": 8, "dev": 0, "frozen_seen": 0, "frozen_heldout": 3}
)
TINY = ["--seed", "9", "--train", "1", "--dev", "1", "--seen", "1", "--heldout", "1"]


@pytest.mark.slow
def test_the_same_seed_gives_identical_files_and_the_rerun_is_served_by_the_cache(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache.jsonl"
    runner = CliRunner()
    first = runner.invoke(
        fn_app(), ["corpus", "generate", *TINY, "--out", str(tmp_path / "a"), "--cache", str(cache)]
    )
    assert first.exit_code == 0, first.output
    assert "4 verified now, 0 from the cache" in " ".join(first.output.split())
    staged = read_rows(tmp_path / "a" / STAGING)
    assert [r["verification"]["status"] for r in staged] == ["passed"] * 4
    assert all(r["verification"]["reward"] > 0 for r in staged)

    again = runner.invoke(
        fn_app(), ["corpus", "generate", *TINY, "--out", str(tmp_path / "b"), "--cache", str(cache)]
    )
    assert again.exit_code == 0, again.output
    assert "0 verified now, 4 from the cache" in " ".join(again.output.split())
    manifest = json.loads((tmp_path / "a" / MANIFEST).read_text())
    assert manifest == json.loads((tmp_path / "b" / MANIFEST).read_text())
    for split in manifest["splits"]:
        assert sha256_file(split_path(tmp_path / "a", split)) == sha256_file(
            split_path(tmp_path / "b", split)
        )
    audit = runner.invoke(fn_app(), ["corpus", "audit", str(tmp_path / "a")])
    assert audit.exit_code == 0, audit.output


@pytest.mark.slow
def test_a_pair_whose_fast_source_is_wrong_aborts_generation_naming_it(tmp_path: Path) -> None:
    good, bad = build_pairs(ONE_EACH)[:2]
    broken = TrustedPair(bad.case, wrong_constant(bad.fast_source), bad.split, bad.literals)
    config = GenerationConfig(seed=21, sizes=ONE_EACH.sizes, workers=1)
    cache = VerificationCache(tmp_path / "cache.jsonl")
    with pytest.raises(PairRejected, match=bad.case.id) as raised:
        verify_pairs([good, broken], config, cache)
    assert "'mismatch'" in str(raised.value)
    # The pair verified before the failure is kept: the next run resumes after it.
    assert len(VerificationCache(tmp_path / "cache.jsonl")) == 1


@pytest.mark.slow
def test_one_pair_of_every_family_passes_the_verifier(tmp_path: Path) -> None:
    pairs = build_pairs(ONE_EACH)
    assert {p.case.family for p in pairs} == {f.name for f in FAMILIES}
    rows, stats = verify_pairs(pairs, ONE_EACH, VerificationCache(tmp_path / "cache.jsonl"))
    assert stats.verified == len(pairs) and stats.cached == 0
    assert all(r.verification["status"] == "passed" for r in rows)
    assert all(r.verification["reward"] > 0 for r in rows)


@pytest.mark.slow
@pytest.mark.corpus
# 250 verifications of about 10 s of CPU each on 2 cores: 30 min 12 s measured, far past the
# suite's 600 s timeout per test.
@pytest.mark.timeout(3600)
def test_the_whole_default_corpus_verifies(tmp_path: Path) -> None:
    rows, stats = stage(GenerationConfig(), VerificationCache(tmp_path / "cache.jsonl"))
    assert len(rows) == 250
    assert stats.verified == 250
    assert all(r.verification["status"] == "passed" for r in rows)
