"""A Go project's benchmarks as real workloads, in a manifest of their own.

The reported lane reads every workload of a manifest as a benchmark's run (docs/adr/0049), so a
`func BenchmarkX(b *testing.B)` cannot sit beside the timed commands of `speedproof.toml`. Beside
it init writes `speedproof-bench.toml`: the same [target] and [tests], every Go benchmark it found
as a workload (`go test -run ^$ -bench ^Name$`, one second each), measured by ns_per_op with
allocs_per_op protected. Running a benchmark is as safe as running the tests, which every
judgement does. pytest-benchmark tests and pyperf scripts stay commented: their harness and
plugins are the project's choice, and init cannot tell which are installed.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.init.bench_example import bench_sections, bench_workloads
from speedproof.init.checks import validate
from speedproof.init.model import Benchmark, Project
from speedproof.init.toml_text import toml_value

BENCH_MANIFEST = "speedproof-bench.toml"


def write_bench_manifest(project: Project, *, force: bool) -> tuple[Path | None, list[str]]:
    """The manifest written (None when none was), and what stopped it, for the missing list."""
    benches = [b for b in project.benchmarks if b.kind == "go"]
    if not benches:
        return None, []
    path = project.root / BENCH_MANIFEST
    if path.exists() and not force:
        return None, [
            f"{BENCH_MANIFEST}: it already exists, and init does not overwrite it without --force"
        ]
    path.write_text(_text(project, benches), encoding="utf-8")
    checked = validate(path)
    if not checked.valid:
        path.unlink()
        said = f"Go benchmarks as workloads: {BENCH_MANIFEST} did not validate, so it was removed"
        return None, [f"{said}: {checked.message}"]
    return path, []


def _text(project: Project, benches: list[Benchmark]) -> str:
    entry = project.entry_points[0].target if project.entry_points else {"package": "."}
    lines = [
        f"# {project.name}'s Go benchmarks as workloads, written by `speedproof init`. Judge with",
        f"# `speedproof judge PATCH --manifest {BENCH_MANIFEST}`; every run yields ns_per_op,",
        "# bytes_per_op and allocs_per_op, judged in the reported lane (docs/manifest.md).",
        "",
        "[target]",
        f"name = {toml_value(project.name)}",
        'language = "go"',
        *(f"{key} = {toml_value(value)}" for key, value in entry.items()),
        "",
        "[tests]",
        f"runner = {toml_value(project.tests.runner)}",
        f"args = {toml_value(list(project.tests.args))}",
        "timeout_s = 600",
        "",
        *bench_workloads(benches),
        *bench_sections(benches[0]),
    ]
    return "\n".join(lines) + "\n"
