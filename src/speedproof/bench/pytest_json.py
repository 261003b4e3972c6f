"""pytest-benchmark's JSON report (`--benchmark-json=FILE`): one benchmark's per-call time.

The metric is the median of the per-call times of the rounds (`stats.median`), not their mean:
on this 2-core machine under a load of 5-6, 20 runs of one pytest-benchmark benchmark in a row
read a between-run spread (sd of the log) of 17.4 % for the median and 36.0 % for the mean,
whose rounds carry the pauses of a shared machine (a round 40 × the median now and then). The
judge compares runs, so the figure with half the spread between runs needs a quarter of the
pairs for the same resolution.

The report must hold exactly one benchmark, the one asked (by node id, or by test name for a
`-k` selection), whose figures agree with each other (min ≤ median ≤ max, rounds × mean =
total): a forger that edits one figure leaves the others behind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from speedproof.bench.consistency import PYTHON_WALL_SHARE, BenchReading
from speedproof.bench.schema import NS_PER_OP
from speedproof.ground.errors import SpeedproofError

# rounds × mean against total: float sums of thousands of rounds agree to far better than this.
_AGREE = 1e-6


class PytestBenchError(SpeedproofError):
    """The report does not hold one coherent result for the benchmark asked."""


def _selected(report: Mapping[str, Any], bench: str) -> Mapping[str, Any]:
    benchmarks = report.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise PytestBenchError("the report has no list of benchmarks")
    names = [str(b.get("fullname") or b.get("name")) for b in benchmarks if isinstance(b, dict)]
    if len(benchmarks) != 1 or len(names) != 1:
        raise PytestBenchError(
            f"the report holds {len(benchmarks)} benchmarks ({', '.join(names[:5])}) where "
            f"{bench!r} selects exactly one"
        )
    found: Mapping[str, Any] = benchmarks[0]
    if bench not in (found.get("fullname"), found.get("name")):
        raise PytestBenchError(f"the report's benchmark is {names[0]!r}, not {bench!r}")
    return found


def _number(stats: Mapping[str, Any], key: str) -> float:
    value = stats.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PytestBenchError(f"the report's stats.{key} is {value!r}, not a finite number")
    if value < 0:
        raise PytestBenchError(f"the report's stats.{key} is negative ({value})")
    return float(value)


def _coherent(figures: Mapping[str, float]) -> None:
    if not figures["min"] <= figures["median"] <= figures["max"]:
        raise PytestBenchError(
            f"the report's median {figures['median']:.4g} s lies outside its own range "
            f"[{figures['min']:.4g}, {figures['max']:.4g}] s (forged?)"
        )
    expected = figures["rounds"] * figures["mean"]
    if not math.isclose(expected, figures["total"], rel_tol=_AGREE, abs_tol=1e-12):
        raise PytestBenchError(
            f"the report's rounds × mean is {expected:.6g} s but its total is "
            f"{figures['total']:.6g} s (forged?)"
        )


def parse_pytest_benchmark(report: Mapping[str, Any], bench: str) -> BenchReading:
    """The reading of `bench` from a pytest-benchmark JSON report."""
    stats = _selected(report, bench).get("stats")
    if not isinstance(stats, dict):
        raise PytestBenchError("the report's benchmark has no stats")
    keys = ("min", "max", "mean", "median", "rounds", "total", "iterations")
    figures = {key: _number(stats, key) for key in keys}
    if figures["rounds"] < 1 or figures["iterations"] < 1:
        raise PytestBenchError("the report's benchmark ran no round")
    _coherent(figures)
    median = figures["median"]
    return BenchReading(
        metrics={NS_PER_OP: median * 1e9},
        # stats hold per-call times: a round's timed seconds are its time × iterations.
        timed_s=figures["total"] * figures["iterations"],
        floor_wall_share=PYTHON_WALL_SHARE,
        what=(
            f"{figures['rounds']:.0f} rounds × {figures['iterations']:.0f} iterations, "
            f"median {median * 1e9:.6g} ns"
        ),
        why_floor=f"({PYTHON_WALL_SHARE:.0%} of the run) every honest pytest-benchmark run times",
    )
