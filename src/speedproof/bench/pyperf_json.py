"""pyperf's JSON results (`-o FILE`): one benchmark's per-call time.

A pyperf file holds benchmarks, each a list of runs; a run's `values` are seconds per call
(pyperf divides each timed stretch by its loops and inner loops), its `warmups` pairs of
(loops, seconds per call), and `loops` and `inner_loops` come from the run's metadata, else the
benchmark's, else the file's common metadata (pyperf moves metadata every benchmark shares up to
the file). The metric is the median of every value of every run, for the reason
`pytest_json` gives: the median's between-run spread is half the mean's on a shared machine.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from speedproof.bench.consistency import PYTHON_WALL_SHARE, BenchReading
from speedproof.bench.schema import NS_PER_OP
from speedproof.ground.errors import SpeedproofError


class PyperfError(SpeedproofError):
    """The file does not hold one readable result for the benchmark asked."""


def _name(bench: Mapping[str, Any], common: Mapping[str, Any]) -> str:
    own = bench.get("metadata")
    meta = {**common, **(own if isinstance(own, dict) else {})}
    return str(meta.get("name", ""))


def _chosen(
    report: Mapping[str, Any], name: str | None
) -> tuple[Mapping[str, Any], dict[str, Any]]:
    benchmarks = report.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise PyperfError("the file holds no benchmarks")
    common = report.get("metadata")
    common = dict(common) if isinstance(common, dict) else {}
    names = [_name(b, common) for b in benchmarks if isinstance(b, dict)]
    if name is None and len(benchmarks) == 1:
        return benchmarks[0], common
    if name is None:
        raise PyperfError(
            f"the script ran {len(names)} benchmarks ({', '.join(names)}): name one as "
            '"SCRIPT::NAME" in `bench`'
        )
    found = [b for b, n in zip(benchmarks, names, strict=False) if n == name]
    if len(found) != 1:
        raise PyperfError(f"the file holds {len(found)} benchmarks named {name!r} (of {names})")
    return found[0], common


def _finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PyperfError(f"{what} is {value!r}, not a finite number")
    if value < 0:
        raise PyperfError(f"{what} is negative ({value})")
    return float(value)


def _run_time(run: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[list[float], float]:
    """(values of one run, the seconds its values and warm-ups were timed for)."""
    loops = _finite(meta.get("loops", 1), "a run's loops")
    inner = _finite(meta.get("inner_loops", 1), "a run's inner_loops")
    values = [_finite(v, "a value") for v in run.get("values", [])]
    timed = sum(values) * loops * inner
    for pair in run.get("warmups", []):
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise PyperfError(f"a warm-up is {pair!r}, not (loops, value)")
        timed += _finite(pair[0], "a warm-up's loops") * _finite(pair[1], "a warm-up") * inner
    return values, timed


def parse_pyperf(report: Mapping[str, Any], name: str | None) -> BenchReading:
    """The reading of the benchmark `name` (None: the only one) from a pyperf JSON file."""
    bench, common = _chosen(report, name)
    own = bench.get("metadata")
    meta = {**common, **(own if isinstance(own, dict) else {})}
    runs = bench.get("runs")
    if not isinstance(runs, list):
        raise PyperfError("the benchmark has no runs")
    values: list[float] = []
    timed = 0.0
    for run in runs:
        if not isinstance(run, dict):
            raise PyperfError(f"a run is {run!r}, not an object")
        run_meta = run.get("metadata")
        found, seconds = _run_time(
            run, {**meta, **(run_meta if isinstance(run_meta, dict) else {})}
        )
        values += found
        timed += seconds
    if not values:
        raise PyperfError("the benchmark's runs hold no values")
    median = statistics.median(values)
    return BenchReading(
        metrics={NS_PER_OP: median * 1e9},
        timed_s=timed,
        floor_wall_share=PYTHON_WALL_SHARE,
        what=f"{len(values)} values in {len(runs)} runs, median {median * 1e9:.6g} ns",
        why_floor=f"({PYTHON_WALL_SHARE:.0%} of the run) every honest pyperf run times",
    )
