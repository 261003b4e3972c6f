"""One parser per format, and the wall-time cross-check, on outputs the harnesses really print.

The Go lines are a real `parser.test -test.bench=^BenchmarkCount$ -test.benchmem` run's output;
the JSON reports are the real shapes pytest-benchmark 5.3 and pyperf 2.11 write, cut down to the
fields read.
"""

from __future__ import annotations

from typing import Any

import pytest

from speedproof.bench.consistency import BenchReading, InconsistentRun, check_consistent
from speedproof.bench.go_output import GoBenchError, metric_name, parse_go_bench
from speedproof.bench.pyperf_json import PyperfError, parse_pyperf
from speedproof.bench.pytest_json import PytestBenchError, parse_pytest_benchmark
from speedproof.bench.schema import benchtime_seconds, go_pattern

GO_OUTPUT = b"""goos: linux
goarch: amd64
pkg: example.com/golib/parser
cpu: AMD EPYC
BenchmarkCount-2   \t     426\t    728385 ns/op\t  160782 B/op\t    2001 allocs/op
PASS
"""


def test_a_go_result_line_yields_ns_bytes_and_allocs_per_op() -> None:
    reading = parse_go_bench(GO_OUTPUT, "BenchmarkCount", "200ms")
    assert reading.metrics == {
        "ns_per_op": 728385.0,
        "bytes_per_op": 160782.0,
        "allocs_per_op": 2001.0,
    }
    assert reading.timed_s == pytest.approx(426 * 728385e-9)
    assert reading.floor_s == pytest.approx(0.18)


def test_a_go_line_without_the_gomaxprocs_suffix_and_with_extra_units_is_read() -> None:
    line = b"BenchmarkCount \t 100\t 709203 ns/op\t 2.93 MB/s\t 160768 B/op\t 2001 allocs/op\n"
    reading = parse_go_bench(line, "BenchmarkCount", "100x")
    assert reading.metrics["MB_per_s"] == 2.93
    assert reading.floor_s == 0.0
    assert metric_name("widgets/op") == "widgets_per_op"


@pytest.mark.parametrize(
    ("output", "said"),
    [
        (GO_OUTPUT.replace(b"BenchmarkCount-2", b"BenchmarkOther-2"), "not asked for"),
        (GO_OUTPUT + GO_OUTPUT.splitlines(keepends=True)[4], "2 result lines"),
        (b"PASS\n", "no result line"),
        (GO_OUTPUT.replace(b"\t  160782 B/op", b""), "no bytes_per_op"),
    ],
    ids=["another-benchmark", "two-lines", "none", "no-benchmem"],
)
def test_a_go_output_without_exactly_one_good_line_is_refused_by_name(
    output: bytes, said: str
) -> None:
    with pytest.raises(GoBenchError, match=said):
        parse_go_bench(output, "BenchmarkCount", "200ms")


def test_a_count_benchtime_must_be_the_iterations_the_line_reports() -> None:
    with pytest.raises(GoBenchError, match="runs exactly 1000"):
        parse_go_bench(GO_OUTPUT, "BenchmarkCount", "1000x")


def test_a_sub_benchmark_is_anchored_level_by_level() -> None:
    assert go_pattern("BenchmarkParse/small") == "^BenchmarkParse$/^small$"
    assert benchtime_seconds("1m30s") == 90.0


def pytest_report(**stats: float) -> dict[str, Any]:
    figures = {"min": 3e-4, "max": 1.2e-2, "median": 5e-4, "rounds": 4.0, "iterations": 1.0}
    figures.update(stats)
    figures.setdefault("mean", 7.5e-4)
    figures.setdefault("total", figures["mean"] * figures["rounds"])
    return {
        "benchmarks": [
            {"name": "test_count", "fullname": "tests/test_bench.py::test_count", "stats": figures}
        ]
    }


def test_pytest_benchmark_yields_the_median_per_call_time() -> None:
    reading = parse_pytest_benchmark(pytest_report(), "tests/test_bench.py::test_count")
    assert reading.metrics == {"ns_per_op": pytest.approx(5e5)}
    assert reading.timed_s == pytest.approx(3e-3)
    assert parse_pytest_benchmark(pytest_report(), "test_count").metrics["ns_per_op"] > 0


@pytest.mark.parametrize(
    ("report", "said"),
    [
        (pytest_report(median=1e-5), "outside its own range"),
        (pytest_report(total=1.0), "rounds × mean"),
        ({"benchmarks": []}, "holds 0 benchmarks"),
        (pytest_report(median=float("nan")), "not a finite number"),
    ],
    ids=["median-edited", "mean-edited", "empty", "nan"],
)
def test_an_incoherent_pytest_benchmark_report_is_refused(
    report: dict[str, Any], said: str
) -> None:
    with pytest.raises(PytestBenchError, match=said):
        parse_pytest_benchmark(report, "test_count")


def test_a_pytest_benchmark_report_of_another_test_is_refused() -> None:
    with pytest.raises(PytestBenchError, match="not 'test_other'"):
        parse_pytest_benchmark(pytest_report(), "test_other")


PYPERF = {
    "metadata": {"name": "count", "loops": 256},
    "benchmarks": [
        {
            "runs": [
                {"metadata": {"calibrate_loops": 256}, "warmups": [[128, 6e-4], [256, 4e-4]]},
                {"values": [6e-4, 4e-4], "warmups": [[256, 8e-4]]},
                {"values": [5e-4, 5e-4], "warmups": [[256, 6e-4]]},
            ]
        }
    ],
}


def test_pyperf_yields_the_median_of_every_value_of_every_run() -> None:
    reading = parse_pyperf(PYPERF, None)
    assert reading.metrics == {"ns_per_op": pytest.approx(5e5)}
    # Values and warm-ups, each × its loops: (2e-3 × 256) + 128 × 6e-4 + 256 × (4e-4 + 8e-4 + 6e-4).
    assert reading.timed_s == pytest.approx(2e-3 * 256 + 128 * 6e-4 + 256 * 1.8e-3)
    assert parse_pyperf(PYPERF, "count").metrics == reading.metrics
    with pytest.raises(PyperfError, match="0 benchmarks named 'parse'"):
        parse_pyperf(PYPERF, "parse")


def test_a_reported_total_longer_than_the_run_is_an_inconsistent_run() -> None:
    reading = BenchReading({"ns_per_op": 1.0}, timed_s=2.0, what="2 000 000 000 × 1 ns/op")
    with pytest.raises(InconsistentRun, match="whole run took 1 s"):
        check_consistent(reading, wall_s=1.0)
    check_consistent(reading, wall_s=2.5)


def test_a_reported_total_below_the_harness_floor_is_an_inconsistent_run() -> None:
    reading = BenchReading({"ns_per_op": 1.0}, timed_s=0.05, floor_s=0.09, why_floor="floor")
    with pytest.raises(InconsistentRun, match=r"only 0\.05 s of timed iterations"):
        check_consistent(reading, wall_s=0.3)
    shared = BenchReading({"ns_per_op": 1.0}, timed_s=1e-4, floor_wall_share=0.001)
    with pytest.raises(InconsistentRun, match=r"below the 0\.002 s"):
        check_consistent(shared, wall_s=2.0)
    check_consistent(shared, wall_s=0.05)
