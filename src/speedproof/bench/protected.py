"""The files of a Python benchmark workload's benchmark, protected from every patch.

A Go benchmark lives in a `_test.go` file, and a pytest-benchmark test under `tests/` or in a
`test_*.py` file, all protected by default; but a benchmark may live anywhere
(`benchmarks/bench_parse.py::test_parse`, a pyperf script `bench/parse.py`), and a patch that
could edit it could make it measure nothing. Each such file is protected by name; a module the
benchmark imports from beside it is the manifest's to protect (`[protect] paths`).
"""

from __future__ import annotations

from speedproof.bench.schema import pyperf_parts
from speedproof.manifest import Manifest


def benchmark_files(manifest: Manifest) -> list[tuple[str, str]]:
    """(target-relative file, what names it) for every Python benchmark workload's file."""
    found: list[tuple[str, str]] = []
    for workload in manifest.workloads:
        bench = str(workload.bench)
        if workload.kind == "pyperf":
            found.append((pyperf_parts(bench)[0], f"workload `{workload.id}` pyperf script"))
        elif workload.kind == "pytest-benchmark" and "::" in bench:
            found.append((bench.split("::", 1)[0], f"workload `{workload.id}` benchmark"))
    return found
