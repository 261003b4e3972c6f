"""A Go library judged through its own `testing.B` benchmark, by the real judge.

A real module in a temporary git repository: `words.Count` splits every line and every word
(two allocations a line, one a word); `BenchmarkCount` counts 2 000 words. The test binary is
compiled by speedproof's build step, each run is `words.test -test.bench=^BenchmarkCount$
-test.benchtime=50ms -test.count=1 -test.benchmem` in the package's folder, and ns/op (primary)
and allocs/op (protected) go through the reported lane's pairs, statistics and policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ledger import Ledger
from support.bench import (
    GO_COUNT,
    GO_FAST,
    GO_FORGED_EXTRA,
    GO_FORGED_LONG,
    GO_FORGED_SHORT,
    GO_SLOW,
    go_library,
    judged,
    patch,
)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return go_library(tmp_path_factory.mktemp("go") / "words", benchtime="50ms", repeats=8)


def test_a_real_speedup_of_the_library_is_accepted_on_its_benchmark(
    library: Path, tmp_path: Path
) -> None:
    outcome = judged(library, patch(library, {"words/count.go": GO_FAST}), tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    assert outcome.verdict.rests_on == "count"
    readings = {c.metric: c for c in outcome.comparisons if c.lane == "reported"}
    # One pass over the bytes instead of a split per line and per word: several times faster,
    # and no allocation at all.
    assert readings["ns_per_op"].delta_pct < -50
    assert readings["allocs_per_op"].candidate_mean == 0
    with Ledger.in_folder(tmp_path / "ledger") as book:
        runs = [s for s in book.show(outcome.ledger_id)["samples"] if s["reported"]]
    # 8 pairs, measured again when the round was contended (the machine is shared).
    assert len(runs) in (16, 32)
    # Every run keeps the metrics [reported] names (bytes_per_op is read but not named).
    assert all(set(run["reported"]) == {"ns_per_op", "allocs_per_op"} for run in runs)


@pytest.mark.slow
def test_a_slowdown_of_the_library_is_rejected_on_its_benchmark(
    library: Path, tmp_path: Path
) -> None:
    assert GO_SLOW != GO_COUNT
    outcome = judged(library, patch(library, {"words/count.go": GO_SLOW}), tmp_path / "ledger")
    assert outcome.verdict.verdict == "rejected"
    assert any("ns_per_op is significantly worse" in r for r in outcome.verdict.reasons)


@pytest.mark.parametrize(
    ("forge", "said"),
    [
        (GO_FORGED_SHORT, "below the 0.045 s that a -test.benchtime=50ms round always reaches"),
        (GO_FORGED_LONG, "reports 100 s of timed iterations"),
        (GO_FORGED_EXTRA, "2 result lines for BenchmarkCount"),
    ],
    ids=["claims-too-little-time", "claims-more-time-than-the-run", "prints-a-second-line"],
)
def test_a_benchmark_line_forged_by_the_candidate_is_a_failed_run_with_the_reason_named(
    library: Path, tmp_path: Path, forge: str, said: str
) -> None:
    outcome = judged(library, patch(library, {"words/forge.go": forge}), tmp_path / "ledger")
    assert outcome.verdict.verdict == "rejected"
    assert any(said in r and "candidate run" in r for r in outcome.verdict.reasons), (
        outcome.verdict.reasons
    )
    # The forger acts only in benchmark runs: the tests and the behaviour gate saw nothing.
    passed = {g.name for g in outcome.gates if g.passed}
    assert {"tests", "behaviour"} <= passed
