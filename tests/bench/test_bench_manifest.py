"""Benchmark workloads in the manifest: keys checked with errors naming key and line, and
`speedproof manifest validate` finding the named benchmark in real folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import ManifestError
from speedproof.manifest_loading import load_manifest, parse_manifest
from speedproof.preflight import check
from support.bench import (
    GO_MANIFEST,
    PYPERF_WORKLOAD,
    go_library,
    judged,
    patch,
    python_library,
)


def error(text: str) -> str:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, "speedproof.toml")
    return str(caught.value)


GO = GO_MANIFEST.format(benchtime="100ms", repeats=8)


def test_a_go_workload_naming_a_bench_becomes_a_go_bench_workload() -> None:
    manifest = parse_manifest(GO)
    workload = manifest.workloads[0]
    assert (workload.kind, workload.package, workload.benchtime) == ("go-bench", "./words", "100ms")
    assert manifest.benchmarks == [workload]
    assert not manifest.counts_instructions


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            'benchtime = "100ms"',
            'benchtime = "fast"',
            "speedproof.toml:12: `workloads.0.benchtime`",
        ),
        ('bench = "BenchmarkCount"', 'bench = "Count"', "speedproof.toml:10: `workloads.0.bench`"),
        (
            'package = "./words"',
            'package = "../words"',
            "speedproof.toml:11: `workloads.0.package`",
        ),
        ('benchtime = "100ms"', 'benchtime = "1x"\nstdin = "a.txt"', ":13: `workloads.0.stdin`"),
        ('benchtime = "100ms"', 'benchtime = "1x"\nargs = ["-v"]', ":13: `workloads.0.args`"),
        ("[policy]", "[instructions]\nenabled = true\n[policy]", "`instructions.enabled`"),
    ],
    ids=["benchtime", "name", "package", "stdin", "args", "cachegrind"],
)
def test_a_bad_benchmark_key_is_refused_naming_key_and_line(old: str, new: str, said: str) -> None:
    assert old in GO
    assert said in error(GO.replace(old, new))


def test_a_benchmark_of_another_language_is_refused_at_its_kind() -> None:
    text = GO.replace('language = "go"', 'language = "python"').replace(
        'bench = "BenchmarkCount"', 'kind = "go-bench"\nbench = "BenchmarkCount"'
    )
    said = error(text)
    assert "speedproof.toml:10: `workloads.0.kind` (line 10): a go-bench workload runs a go" in said


def test_a_benchmark_workload_without_a_reported_block_is_told_what_to_add() -> None:
    said = error(GO.split("[reported]")[0] + "[policy]\nguardrails = []\n")
    assert "speedproof.toml:10: `workloads.0.bench`" in said
    assert 'add [reported] primary = "ns_per_op"' in said


def test_a_python_benchmark_cannot_protect_a_metric_it_does_not_yield() -> None:
    text = GO.replace('language = "go"', 'language = "python"').replace(
        'bench = "BenchmarkCount"\npackage = "./words"\nbenchtime = "100ms"',
        'bench = "tests/test_bench.py::test_count"',
    )
    said = error(text.replace('[tests]\nrunner = "go"', '[tests]\nrunner = "pytest"'))
    assert "yields ns_per_op, not 'allocs_per_op'" in said


def test_a_python_library_measured_by_benchmarks_alone_needs_no_module() -> None:
    text = GO.replace('language = "go"', 'language = "python"').replace(
        'bench = "BenchmarkCount"\npackage = "./words"\nbenchtime = "100ms"',
        'kind = "pyperf"\nbench = "bench/b.py"',
    )
    text = text.split("[[reported.protected]]")[0] + "[policy]\nguardrails = []\n"
    assert parse_manifest(text).workloads[0].kind == "pyperf"
    command = text.replace(
        '[[workloads]]\nid = "count"', '[[workloads]]\nid = "cli"\n\n[[workloads]]\nid = "count"'
    )
    assert "`target` (line 1): a python target needs exactly one of" in error(command)


def test_validate_finds_the_go_benchmark_and_names_a_missing_one(tmp_path: Path) -> None:
    repo = go_library(tmp_path / "words")
    assert check(load_manifest(repo)) == []
    manifest = repo / "speedproof.toml"
    manifest.write_text(manifest.read_text().replace("BenchmarkCount", "BenchmarkCounts"))
    problems = check(load_manifest(repo))
    assert [p.loc for p in problems] == [("workloads", 0, "bench")]
    assert "declares `func BenchmarkCounts(`" in problems[0].message


def test_validate_finds_the_python_benchmarks_and_names_missing_ones(tmp_path: Path) -> None:
    repo = python_library(tmp_path / "wordy")
    assert check(load_manifest(repo)) == []
    manifest = repo / "speedproof.toml"
    manifest.write_text(manifest.read_text().replace("::test_count", "::test_counts"))
    assert "defines no test `test_counts`" in check(load_manifest(repo))[0].message
    other = python_library(tmp_path / "perf", workload=PYPERF_WORKLOAD)
    assert check(load_manifest(other)) == []
    manifest = other / "speedproof.toml"
    manifest.write_text(manifest.read_text().replace("::count", "::parse"))
    assert "names no benchmark 'parse'" in check(load_manifest(other))[0].message


def test_a_patch_to_a_pyperf_script_is_refused_as_a_protected_file(tmp_path: Path) -> None:
    repo = python_library(tmp_path / "wordy", workload=PYPERF_WORKLOAD)
    script = (repo / "bench" / "bench_count.py").read_text()
    diff = patch(repo, {"bench/bench_count.py": script.replace("* 400", "* 4")})
    outcome = judged(repo, diff, tmp_path / "ledger")
    assert outcome.verdict.verdict == "rejected"
    assert any("workload `count` pyperf script" in r for r in outcome.verdict.reasons)
