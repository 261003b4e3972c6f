"""Go benchmark output, in the benchstat tradition: one result line per benchmark run.

`BenchmarkParse-2   12345   9876 ns/op   512 B/op   7 allocs/op` is the name (with `-N`, the
GOMAXPROCS, when it is not 1), the iterations, then value-unit pairs: ns/op always, B/op and
allocs/op with -benchmem, MB/s after b.SetBytes and any unit b.ReportMetric adds. A run of one
benchmark with -test.count=1 prints exactly one such line for it; none (the benchmark failed,
was skipped, or printed into its own line), two (something printed a line of its own beside the
harness's) or a line of a benchmark not asked for is a failed run, by name.
"""

from __future__ import annotations

import math
import re

from speedproof.bench.consistency import GO_FLOOR_SHARE, BenchReading
from speedproof.bench.schema import (
    ALLOCS_PER_OP,
    BYTES_PER_OP,
    NS_PER_OP,
    benchtime_count,
    benchtime_seconds,
)
from speedproof.ground.errors import SpeedproofError

# Go's units as metric names: the standard three by the names [reported] uses, any other unit
# with "/" read as "per" (MB/s → MB_per_s, widgets/op → widgets_per_op).
_UNITS = {"ns/op": NS_PER_OP, "B/op": BYTES_PER_OP, "allocs/op": ALLOCS_PER_OP}
_RESULT = re.compile(r"^(Benchmark\S*)\s+([0-9]+)((?:\s+\S+\s+\S+)+)\s*$")
# The iteration cap of testing.B's duration loop: a round at the cap may end below benchtime.
_MAX_ITERATIONS = 1_000_000_000


class GoBenchError(SpeedproofError):
    """The output does not hold exactly one well-formed result line of the benchmark asked."""


def metric_name(unit: str) -> str:
    """The metric a Go unit is read as."""
    return _UNITS.get(unit) or re.sub(r"[^A-Za-z0-9_]", "_", unit.replace("/", "_per_"))


def _named(found: str, wanted: str) -> bool:
    """Whether result name `found` is benchmark `wanted` (as is, or with Go's `-GOMAXPROCS`)."""
    return found == wanted or re.fullmatch(re.escape(wanted) + r"-[0-9]+", found) is not None


def _result_lines(stdout: bytes) -> list[tuple[str, int, str]]:
    found = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        match = _RESULT.match(line.strip())
        if match:
            found.append((match.group(1), int(match.group(2)), match.group(3)))
    return found


def _figures(pairs: str, line: str) -> dict[str, float]:
    tokens = pairs.split()
    metrics: dict[str, float] = {}
    for value, unit in zip(tokens[::2], tokens[1::2], strict=True):
        try:
            number = float(value)
        except ValueError as exc:
            raise GoBenchError(
                f"the result line has {value!r} where a number goes: {line}"
            ) from exc
        if not math.isfinite(number) or number < 0:
            raise GoBenchError(f"the result line reports {value} {unit}: {line}")
        metrics[metric_name(unit)] = number
    return metrics


def parse_go_bench(stdout: bytes, bench: str, benchtime: str) -> BenchReading:
    """The one result line of `bench` in a test binary's output, as a reading."""
    lines = _result_lines(stdout)
    ours = [found for found in lines if _named(found[0], bench)]
    others = sorted({name for name, _, _ in lines if not _named(name, bench)})
    if others:
        raise GoBenchError(
            f"the output holds result lines of benchmarks not asked for: {', '.join(others)}"
        )
    if len(ours) != 1:
        said = "no result line" if not ours else f"{len(ours)} result lines"
        raise GoBenchError(
            f"the output holds {said} for {bench}; a run of one benchmark prints exactly one"
        )
    name, iterations, pairs = ours[0]
    line = f"{name} {iterations}{pairs}"
    metrics = _figures(pairs, line)
    for needed in (NS_PER_OP, BYTES_PER_OP, ALLOCS_PER_OP):
        if needed not in metrics:
            raise GoBenchError(f"the result line has no {needed}: {' '.join(line.split())}")
    return _reading(metrics, iterations, benchtime)


def _reading(metrics: dict[str, float], iterations: int, benchtime: str) -> BenchReading:
    count = benchtime_count(benchtime)
    what = f"{iterations} iterations × {metrics[NS_PER_OP]:g} ns/op"
    if count is not None and iterations != count:
        raise GoBenchError(
            f"the result line reports {iterations} iterations where -test.benchtime={benchtime} "
            f"runs exactly {count}"
        )
    floor = 0.0
    if count is None and iterations < _MAX_ITERATIONS:
        floor = GO_FLOOR_SHARE * benchtime_seconds(benchtime)
    return BenchReading(
        metrics=metrics,
        timed_s=iterations * metrics[NS_PER_OP] * 1e-9,
        floor_s=floor,
        what=what,
        why_floor=f"that a -test.benchtime={benchtime} round always reaches",
    )
