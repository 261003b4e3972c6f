"""How a benchmark init found is declared as a workload: the TOML the manifest shows, commented.

A benchmark is measured in the reported lane (docs/adr/0049), which reads every workload of a
manifest as a run that yields metrics, so the example is a manifest's workloads, [behaviour],
[reported] and [policy] whole: put beside a [target] and [tests], it validates.
"""

from __future__ import annotations

import posixpath
import re

from speedproof.bench.schema import ALLOCS_PER_OP, NS_PER_OP
from speedproof.init.model import Benchmark
from speedproof.init.toml_text import toml_value

# How much worse allocations per op may read: docs/manifest.md's example. Go prints a whole
# number of allocations, so on a benchmark of 10 allocations any one more is caught.
ALLOCS_TOLERANCE_PCT = 1.0


def workload_id(bench: Benchmark) -> str:
    """`BenchmarkParseSmall` → `parsesmall`, `test_parse` → `parse`: a workload id's characters."""
    name = re.sub(r"^(Benchmark|test_)", "", bench.name) or bench.name
    return re.sub(r"[^A-Za-z0-9_.\-]", "-", name).lower()


def _workload(bench: Benchmark) -> list[str]:
    path = bench.where.rsplit(":", 1)[0]
    lines = ["[[workloads]]", f"id = {toml_value(workload_id(bench))}"]
    if bench.kind == "go":
        folder = posixpath.dirname(path)
        package = f"./{folder}" if folder else "."
        lines += [
            f"bench = {toml_value(bench.name)}",
            f"package = {toml_value(package)}",
            'benchtime = "1s"            # a duration, or a count such as "1000x"',
        ]
    elif bench.kind == "pytest-benchmark":
        lines.append(f"bench = {toml_value(f'{path}::{bench.name}')}")
    else:
        lines += ['kind = "pyperf"', f"bench = {toml_value(path)}"]
    return lines


def bench_example(bench: Benchmark) -> list[str]:
    """The TOML lines that measure a project by `bench` alone."""
    return [*_workload(bench), "", *bench_sections(bench)]


def bench_workloads(benches: list[Benchmark]) -> list[str]:
    """One workload a benchmark, the first of each id kept (ids are case-folded names)."""
    lines: list[str] = []
    seen: set[str] = set()
    for bench in benches:
        if workload_id(bench) not in seen:
            seen.add(workload_id(bench))
            lines += [*_workload(bench), ""]
    return lines


def bench_sections(bench: Benchmark) -> list[str]:
    """[behaviour], [reported] and [policy] for benchmarks of `bench`'s kind."""
    lines = ["[behaviour]", "compare_stdout = false", ""]
    lines += [
        "[reported]",
        f'primary = "{NS_PER_OP}"',
        'direction = "lower"',
    ]
    if bench.kind == "go":
        lines += [
            "",
            "[[reported.protected]]",
            f'name = "{ALLOCS_PER_OP}"',
            'direction = "lower"',
            f"tolerance_pct = {ALLOCS_TOLERANCE_PCT}",
        ]
    # A benchmark's harness runs for about as long whatever the code does, so wall-clock and CPU
    # guardrails would measure the harness.
    return [*lines, "", "[policy]", "guardrails = []"]
