"""The benchmark workload kinds, the metrics each yields, and checks of their manifest keys.

Pure: imported by `speedproof.manifest`, so it imports nothing of speedproof's. Each check
returns the value or raises ValueError in words a manifest's author can act on.
"""

from __future__ import annotations

import re
from typing import Literal

WorkloadKind = Literal["command", "go-bench", "pytest-benchmark", "pyperf"]
BENCH_KINDS: tuple[WorkloadKind, ...] = ("go-bench", "pytest-benchmark", "pyperf")
# The kind a workload with `bench` and no `kind` gets from `[target] language`.
DEFAULT_KIND: dict[str, WorkloadKind] = {"go": "go-bench", "python": "pytest-benchmark"}
# The language a kind's benchmarks are written in, which the target's must be.
KIND_LANGUAGE: dict[WorkloadKind, str] = {
    "go-bench": "go",
    "pytest-benchmark": "python",
    "pyperf": "python",
}

# The per-call time every kind yields, in nanoseconds, and Go's two memory figures. Named
# without "/" (Go prints ns/op, B/op, allocs/op) so that a name is a plain identifier wherever a
# metric is named: TOML keys, the ledger's JSON, report columns.
NS_PER_OP = "ns_per_op"
BYTES_PER_OP = "bytes_per_op"
ALLOCS_PER_OP = "allocs_per_op"
YIELDS: dict[WorkloadKind, tuple[str, ...]] = {
    "go-bench": (NS_PER_OP, BYTES_PER_OP, ALLOCS_PER_OP),
    "pytest-benchmark": (NS_PER_OP,),
    "pyperf": (NS_PER_OP,),
}
# A Go benchmark also yields every unit its line carries (b.SetBytes gives MB/s, b.ReportMetric
# any unit), so a name outside YIELDS may still be read from it; a Python kind yields only these.
OPEN_ENDED: tuple[WorkloadKind, ...] = ("go-bench",)

# `BenchmarkParse`, or a sub-benchmark `BenchmarkParse/small` (levels split at "/" as -bench does).
_GO_NAME = re.compile(r"Benchmark[A-Za-z0-9_]*(/[^\s/]+)*")
# Go's -benchtime: a count (`1000x`) or a duration time.ParseDuration reads (`200ms`, `1.5s`).
_COUNT = re.compile(r"([1-9][0-9]*)x")
_DURATION = re.compile(r"([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
GO_DEFAULT_BENCHTIME = "1s"


def check_bench(kind: WorkloadKind, value: str) -> str:
    """`bench` as its kind names a benchmark."""
    if kind == "command":
        raise ValueError(
            "a benchmark needs its kind: set kind = "
            + " | ".join(f'"{k}"' for k in BENCH_KINDS)
            + " (go and python targets default to go-bench and pytest-benchmark)"
        )
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is not a benchmark name (empty, or it has spaces)")
    if kind == "go-bench" and not _GO_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a Go benchmark: a testing.B function's name begins with "
            '"Benchmark" (a sub-benchmark: "BenchmarkParse/small")'
        )
    if kind == "pyperf" and not value.split("::", 1)[0].endswith(".py"):
        raise ValueError(
            f'{value!r}: a pyperf benchmark is its script, "bench/parse.py", or '
            '"bench/parse.py::NAME" to pick one benchmark the script runs'
        )
    return value


def check_package(kind: WorkloadKind, value: str) -> str:
    """`package`: one Go package, relative to the target folder and inside it."""
    if kind != "go-bench":
        raise ValueError("`package` belongs to a go-bench workload (the package of its benchmark)")
    parts = value.split("/")
    if not value.startswith(".") or ".." in parts or "..." in value:
        raise ValueError(
            f'{value!r} is not one package inside the target folder: write "." or "./parser"'
        )
    return value


def check_benchtime(kind: WorkloadKind, value: str) -> str:
    """`benchtime`: Go's -benchtime, a count or a positive duration."""
    if kind != "go-bench":
        raise ValueError("`benchtime` belongs to a go-bench workload")
    if _COUNT.fullmatch(value):
        return value
    if _DURATION.fullmatch(value) and benchtime_seconds(value) > 0:
        return value
    raise ValueError(
        f'{value!r} is not a Go benchtime: a count such as "1000x" or a duration such as '
        '"200ms" or "1s"'
    )


def benchtime_count(value: str) -> int | None:
    """The iterations a count benchtime asks for (`1000x` → 1000); None for a duration."""
    match = _COUNT.fullmatch(value)
    return int(match.group(1)) if match else None


def benchtime_seconds(value: str) -> float:
    """The seconds a duration benchtime asks for (`1m30s` → 90.0); 0 for a count."""
    if _COUNT.fullmatch(value):
        return 0.0
    return sum(float(n) * _SECONDS[unit] for n, unit in _DURATION_PART.findall(value))


def go_pattern(name: str) -> str:
    """-test.bench's pattern for exactly `name`: each level anchored, as -bench splits at "/"."""
    return "/".join(f"^{_quote_meta(level)}$" for level in name.split("/"))


def _quote_meta(text: str) -> str:
    """Go's regexp.QuoteMeta, which RE2 reads back as the literal text."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def pyperf_parts(bench: str) -> tuple[str, str | None]:
    """(the script, the benchmark's name inside it or None) of a pyperf `bench`."""
    script, _, name = bench.partition("::")
    return script, name or None
