"""`speedproof manifest validate`: the benchmark each benchmark workload names must exist.

- go-bench: the package folder exists and one of its `_test.go` files declares
  `func BenchmarkParse(` (the top level of a sub-benchmark's name);
- pytest-benchmark: a node id's file exists and defines the test (`def test_parse(`, the name
  without its parameters); a bare name is looked for in the target's test files;
- pyperf: the script exists and, when a benchmark is named, the script names it in quotes;
- a Python kind's harness imports in the target's interpreter.

Each problem is (manifest location, message with the fix), as `speedproof.preflight` reports it.
Reading source text, not running it: nothing of the target runs here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from speedproof.bench.schema import pyperf_parts
from speedproof.manifest import Manifest, Workload

Found = tuple[tuple[str | int, ...], str]
# Folders no test file of the target's lives in.
_SKIPPED = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "vendor"}
# The module each Python kind needs in the target's interpreter.
HARNESS = {"pytest-benchmark": "pytest_benchmark", "pyperf": "pyperf"}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _declares(paths: Sequence[Path], pattern: str) -> bool:
    found = re.compile(pattern, re.MULTILINE)
    return any(found.search(_read(path)) for path in paths)


def _go(index: int, workload: Workload, root: Path) -> Iterator[Found]:
    package = workload.package or "."
    folder = root / package
    if not folder.is_dir():
        yield ("workloads", index, "package"), f"the package folder {folder} does not exist"
        return
    name = str(workload.bench).split("/", 1)[0]
    tests = sorted(folder.glob("*_test.go"))
    if not _declares(tests, rf"^func\s+{re.escape(name)}\s*\("):
        yield (
            ("workloads", index, "bench"),
            f"no _test.go file in {folder} declares `func {name}(`: name a benchmark of "
            f"package {package!r} (or set `package` to the folder that holds it)",
        )


def _python_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if not _SKIPPED.intersection(path.relative_to(root).parts[:-1]):
            found.append(path)
    return found


def _pytest(index: int, workload: Workload, root: Path) -> Iterator[Found]:
    bench = str(workload.bench)
    where: tuple[str | int, ...] = ("workloads", index, "bench")
    file, _, test = bench.rpartition("::") if "::" in bench else ("", "", bench)
    file = file.split("::", 1)[0]
    name = test.split("[", 1)[0]
    if file and not (root / file).is_file():
        yield where, f"the test file {root / file} does not exist"
        return
    paths = [root / file] if file else _python_files(root)
    if not _declares(paths, rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\("):
        shown = root / file if file else f"the Python files under {root}"
        yield where, f"{shown} defines no test `{name}`: name a pytest-benchmark test"


def _pyperf(index: int, workload: Workload, root: Path) -> Iterator[Found]:
    script, name = pyperf_parts(str(workload.bench))
    where: tuple[str | int, ...] = ("workloads", index, "bench")
    if not (root / script).is_file():
        yield where, f"the pyperf script {root / script} does not exist"
        return
    if name is not None and not re.search(rf"""["']{re.escape(name)}["']""", _read(root / script)):
        yield (
            where,
            f"{root / script} names no benchmark {name!r} (its bench_func's first argument)",
        )


def benchmark_problems(manifest: Manifest, root: Path) -> list[Found]:
    """Every benchmark workload whose benchmark cannot be found in the tree at `root`."""
    checks = {"go-bench": _go, "pytest-benchmark": _pytest, "pyperf": _pyperf}
    found: list[Found] = []
    for index, workload in enumerate(manifest.workloads):
        if workload.is_bench:
            found += checks[workload.kind](index, workload, root)
    return found


def harnesses_needed(manifest: Manifest) -> list[tuple[int, str]]:
    """(workload index, module) for each Python harness the benchmark workloads need."""
    seen: dict[str, int] = {}
    for index, workload in enumerate(manifest.workloads):
        module = HARNESS.get(workload.kind)
        if module is not None:
            seen.setdefault(module, index)
    return [(index, module) for module, index in seen.items()]
