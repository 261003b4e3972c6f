"""Reading the metrics a run reports: the reported lane, one parser per format.

A target of the reported lane is any command that prints, as the last non-empty line of its
stdout, one JSON object of named numbers, for example `{"latency_s": 41.2, "success": 0.78}`.
The manifest's `[reported]` block names the primary metric and the protected ones; every one of
them must be in every run's object, as a finite number. Anything else (no JSON, a missing name,
a string, NaN) is a `MetricsError` that names the problem: a run that does not report is a
failed run, never a zero.

A benchmark workload (`speedproof.bench`) is a run whose metrics come from the benchmark's own
output instead, read by the parser of its format: Go's result line on stdout (`go-bench`), or
the JSON file pytest-benchmark or pyperf writes into the run's scratch folder, a fresh empty
folder outside every tree made for this run alone (`results_folder`), so that no file a
candidate left earlier, anywhere, can be read as this run's. Every benchmark reading is then held
against the run's measured wall time (`bench.consistency`); a run whose figures do not fit is a
failed run with the reason named.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from speedproof.bench.command import results_path
from speedproof.bench.consistency import BenchReading, check_consistent
from speedproof.bench.go_output import parse_go_bench
from speedproof.bench.pyperf_json import parse_pyperf
from speedproof.bench.pytest_json import parse_pytest_benchmark
from speedproof.bench.schema import GO_DEFAULT_BENCHTIME, pyperf_parts
from speedproof.ground.errors import SpeedproofError
from speedproof.ground.process import ProcessResult
from speedproof.manifest import Workload

# A results file larger than this is no benchmark's report (pytest-benchmark's with per-round
# data of 100 000 rounds is about 2 MiB).
_RESULTS_LIMIT = 64 * 1024 * 1024

# The object must be on one of the last few lines: a benchmark may print a trailing banner,
# but scanning all of a large output for JSON would find stray objects in its logs.
_LAST_LINES = 5


class MetricsError(SpeedproofError):
    """A run's stdout does not carry the metrics the manifest names."""


def _last_object(stdout: bytes) -> dict[str, object]:
    lines = [line for line in stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in reversed(lines[-_LAST_LINES:]):
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            found = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MetricsError(
                f"the metrics line is not valid JSON ({exc.msg}): {text[:120]}"
            ) from exc
        if isinstance(found, dict):
            return found
    raise MetricsError(
        f"no JSON object of metrics on the last {_LAST_LINES} non-empty lines of stdout"
    )


def parse_metrics(stdout: bytes, names: Sequence[str]) -> dict[str, float]:
    """The named metrics from a run's stdout, in the order of `names`."""
    found = _last_object(stdout)
    values: dict[str, float] = {}
    for name in names:
        if name not in found:
            raise MetricsError(f"the metrics object has no {name!r} (it has {sorted(found)})")
        value = found[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MetricsError(f"metric {name!r} is {value!r}, not a number")
        if not math.isfinite(value):
            raise MetricsError(f"metric {name!r} is {value!r}, not a finite number")
        values[name] = float(value)
    return values


@contextlib.contextmanager
def results_folder(workload: Workload, wanted: bool) -> Iterator[Path | None]:
    """A fresh, empty folder for one run's results file, removed after it; None when the
    workload writes no file (a command, a Go benchmark) or no metrics are `wanted`."""
    if not wanted or results_path(workload, Path(".")) is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="speedproof-bench-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _results_file(path: Path) -> dict[str, Any]:
    """The JSON object in a run's results file: a regular file, not a link, of sane size."""
    try:
        info = os.lstat(path)
    except FileNotFoundError as exc:
        raise MetricsError(f"the benchmark wrote no results file ({path.name})") from exc
    if not stat.S_ISREG(info.st_mode) or info.st_size > _RESULTS_LIMIT:
        raise MetricsError(f"the results file {path.name} is not a regular file of sane size")
    try:
        found = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise MetricsError(f"the results file {path.name} is not readable JSON: {exc}") from exc
    if not isinstance(found, dict):
        raise MetricsError(f"the results file {path.name} holds no JSON object")
    return found


def bench_reading(workload: Workload, result: ProcessResult, scratch: Path | None) -> BenchReading:
    """What one run of a benchmark workload reported, by the parser of its format."""
    bench = str(workload.bench)
    try:
        if workload.kind == "go-bench":
            return parse_go_bench(result.stdout, bench, workload.benchtime or GO_DEFAULT_BENCHTIME)
        path = results_path(workload, scratch)
        if path is None:
            raise MetricsError("the run had no scratch folder for its results file")
        report = _results_file(path)
        if workload.kind == "pyperf":
            return parse_pyperf(report, pyperf_parts(bench)[1])
        return parse_pytest_benchmark(report, bench)
    except MetricsError:
        raise
    except SpeedproofError as exc:
        raise MetricsError(str(exc)) from exc


def read_metrics(
    workload: Workload, result: ProcessResult, scratch: Path | None, names: Sequence[str]
) -> dict[str, float]:
    """The named metrics of one run, in the order of `names`: from the last JSON line of its
    stdout for a command, from its benchmark's own output (held against the run's wall time)
    for a benchmark workload."""
    if not workload.is_bench:
        return parse_metrics(result.stdout, names)
    reading = bench_reading(workload, result, scratch)
    try:
        check_consistent(reading, result.wall_s)
    except SpeedproofError as exc:
        raise MetricsError(str(exc)) from exc
    missing = [name for name in names if name not in reading.metrics]
    if missing:
        raise MetricsError(
            f"the benchmark reports no {', '.join(missing)} (it reports {sorted(reading.metrics)})"
        )
    return {name: reading.metrics[name] for name in names}
