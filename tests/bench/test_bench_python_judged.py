"""A Python library judged through its own pytest-benchmark and pyperf benchmarks, by the real
judge.

A real package in a temporary git repository: `wordy.count_words` splits every line and every
word and strips each; `tests/test_bench.py::test_count` benchmarks it on 2 000 words with
pytest-benchmark, `bench/bench_count.py` with pyperf. Each run writes its JSON report into a
fresh scratch folder speedproof hands over, and the median per-call time (ns_per_op) goes through
the reported lane's pairs, statistics and policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.bench import (
    PY_FAST,
    PY_FORGED_ALL,
    PY_FORGED_MEDIAN,
    PY_SLOW,
    PYPERF_WORKLOAD,
    judged,
    patch,
    python_library,
)

FORGER_IMPORTED = "from wordy import forge\n"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return python_library(tmp_path_factory.mktemp("py") / "wordy", repeats=5)


@pytest.fixture(scope="module")
def pyperf_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pyperf") / "wordy"
    return python_library(folder, workload=PYPERF_WORKLOAD, repeats=5)


# A pytest run starts in about a second of CPU here (pytest and every plugin entry point of a
# large venv), 2-4 s of wall on this shared machine: a judgement of 5 pairs takes 25-45 s.
@pytest.mark.slow
def test_a_real_speedup_is_accepted_on_its_pytest_benchmark(library: Path, tmp_path: Path) -> None:
    outcome = judged(library, patch(library, {"wordy/count.py": PY_FAST}), tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    reading = next(c for c in outcome.comparisons if c.metric == "ns_per_op")
    # str.split() in C against a Python loop over every word: several times faster.
    assert reading.lane == "reported" and reading.delta_pct < -50


@pytest.mark.slow
def test_a_slowdown_is_rejected_on_its_pytest_benchmark(library: Path, tmp_path: Path) -> None:
    outcome = judged(library, patch(library, {"wordy/count.py": PY_SLOW}), tmp_path / "ledger")
    assert outcome.verdict.verdict == "rejected"
    assert any("ns_per_op is significantly worse" in r for r in outcome.verdict.reasons)


@pytest.mark.parametrize(
    ("forge", "said"),
    [
        # 15 s each, a whole judgement; one forgery stays in `make test` (15 minutes on 2 cores).
        pytest.param(PY_FORGED_MEDIAN, "lies outside its own range", marks=pytest.mark.slow),
        (PY_FORGED_ALL, "every honest pytest-benchmark run times"),
    ],
    ids=["median-and-mean-edited", "every-time-a-thousandth"],
)
def test_a_report_rewritten_by_the_candidate_is_a_failed_run_with_the_reason_named(
    library: Path, tmp_path: Path, forge: str, said: str
) -> None:
    files = {"wordy/forge.py": forge, "wordy/__init__.py": FORGER_IMPORTED}
    outcome = judged(library, patch(library, files), tmp_path / "ledger")
    assert outcome.verdict.verdict == "rejected"
    assert any(said in r and "candidate run" in r for r in outcome.verdict.reasons), (
        outcome.verdict.reasons
    )


@pytest.mark.slow
def test_a_real_speedup_is_accepted_on_its_pyperf_benchmark(
    pyperf_library: Path, tmp_path: Path
) -> None:
    diff = patch(pyperf_library, {"wordy/count.py": PY_FAST})
    outcome = judged(pyperf_library, diff, tmp_path / "ledger")
    assert outcome.verdict.verdict == "accepted", outcome.verdict.reasons
    reading = next(c for c in outcome.comparisons if c.metric == "ns_per_op")
    assert reading.delta_pct < -50
