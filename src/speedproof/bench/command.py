"""The command line of one run of a benchmark workload.

- go-bench: the package's test binary, compiled by speedproof's build step
  (`bench.build`), run as `go test` would run one benchmark once:
  `BINARY -test.run=^$ -test.bench=^BenchmarkParse$ -test.benchtime=1s -test.count=1
  -test.benchmem`, in the package's folder. Its results are its stdout.
- pytest-benchmark: `python -s -c BOOTSTRAP SPEC` (the test gate's isolated start,
  `toolchains.python_tests`) running speedproof's runner module, which runs
  `pytest -p no:cacheprovider --rootdir=ROOT -q --benchmark-only --benchmark-quiet
  --benchmark-storage=/tmp/… [--benchmark-json=SCRATCH/…] NODE-ID | -k NAME, ARGS…`.
- pyperf: the same start running the script as `python SCRIPT [-o SCRATCH/…]
  --inherit-environ=PYTHONDONTWRITEBYTECODE,PYTHONPYCACHEPREFIX ARGS…`.

The results file goes into the run's scratch folder (`Invocation.scratch`), fresh and empty for
every measured run and outside every tree; a run without one (the behaviour gate's) writes none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from speedproof.bench.schema import GO_DEFAULT_BENCHTIME, go_pattern, pyperf_parts
from speedproof.ground.errors import InfrastructureError
from speedproof.judge.tests.python_tests import BOOTSTRAP
from speedproof.manifest import Workload

if TYPE_CHECKING:
    from speedproof.ground.program import Program

RUNNER_FOLDER = Path(__file__).resolve().parent / "runner"
RUNNER_MODULE = "speedproof_bench"
# The name of the results file in a run's scratch folder, by kind.
RESULTS_FILE = {"pytest-benchmark": "pytest-benchmark.json", "pyperf": "pyperf.json"}
# Where pytest-benchmark may make its (unused) storage folder: inside the sandbox, the run's
# private /tmp, which dies with it.
_STORAGE = "/tmp/speedproof-benchmark-storage"
# The key of `Program.benches` holding the Python interpreter of a Python benchmark.
PYTHON_KEY = "python"


def results_path(workload: Workload, scratch: Path | None) -> Path | None:
    """Where a run writes its results file, or None (Go: stdout; no scratch: not written)."""
    name = RESULTS_FILE.get(workload.kind)
    return None if name is None or scratch is None else scratch / name


def bench_argv(program: Program, workload: Workload, scratch: Path | None) -> tuple[str, ...]:
    """The command line of one run of `workload` on `program`."""
    if workload.kind == "go-bench":
        return _go_argv(program, workload)
    interpreter = program.benches.get(PYTHON_KEY)
    if interpreter is None:
        raise InfrastructureError(f"workload {workload.id!r}: the build made no Python runner")
    roots = [r for r in program.env.get("PYTHONPATH", "").split(":") if r]
    spec = {
        "folder": str(RUNNER_FOLDER),
        "runner": RUNNER_MODULE,
        "kind": workload.kind,
        # The target folder first, as `python -m pytest` run there with PYTHONPATH has it.
        "path": list(dict.fromkeys([str(program.root), *roots])),
        "children": ":".join(roots),
        **_python_args(program, workload, results_path(workload, scratch)),
    }
    return (str(interpreter), "-s", "-c", BOOTSTRAP, json.dumps(spec))


def _go_argv(program: Program, workload: Workload) -> tuple[str, ...]:
    package = workload.package or "."
    binary = program.benches.get(package)
    if binary is None:
        raise InfrastructureError(
            f"workload {workload.id!r}: the build made no test binary for package {package!r}"
        )
    return (
        str(binary),
        "-test.run=^$",
        f"-test.bench={go_pattern(str(workload.bench))}",
        f"-test.benchtime={workload.benchtime or GO_DEFAULT_BENCHTIME}",
        "-test.count=1",
        "-test.benchmem",
    )


def _python_args(program: Program, workload: Workload, results: Path | None) -> dict[str, object]:
    bench = str(workload.bench)
    if workload.kind == "pyperf":
        script, _ = pyperf_parts(bench)
        out = ["-o", str(results)] if results is not None else []
        # pyperf starts its workers with only a few variables of its own choosing: without
        # these they would write byte-code into the (read-only) tree, and compile the target's
        # modules anew where the build's byte-code is there to read (docs/adr/0061).
        keep = ["--inherit-environ=PYTHONDONTWRITEBYTECODE,PYTHONPYCACHEPREFIX"]
        return {"script": str(program.root / script), "args": [*out, *keep, *workload.args]}
    args = ["-p", "no:cacheprovider", f"--rootdir={program.root}", "-q", "--benchmark-only"]
    # Quiet: its report table and "Wrote benchmark data in: SCRATCH/…" are measurement, not
    # behaviour, and the path differs from run to run.
    args.append("--benchmark-quiet")
    # pytest-benchmark makes its storage folder (./.benchmarks) at start even when it saves
    # nothing, and the tree is no place for it: the run's private /tmp is.
    args.append(f"--benchmark-storage=file://{_STORAGE}")
    if results is not None:
        args.append(f"--benchmark-json={results}")
    args += [bench] if "::" in bench else ["-k", bench]
    return {"args": [*args, *workload.args]}
