"""One workload's invocation of a built target.

The behaviour gate and the timed lane consume `Invocation`s, so neither needs to know which
language the target is written in. It stands above `speedproof.bench` (a benchmark workload's
command line), which stands above `speedproof.ground.program`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.bench.command import bench_argv
from speedproof.ground.program import Program
from speedproof.ground.sandbox import SandboxSpec
from speedproof.manifest import Workload


@dataclass(frozen=True)
class Invocation:
    program: Program
    workload: Workload
    prefix: tuple[str, ...] = ()
    # A benchmark workload's private folder for the results file its harness writes: a fresh,
    # empty one per measured run, outside every tree. None: the harness writes no file.
    scratch: Path | None = None

    @property
    def argv(self) -> tuple[str, ...]:
        if self.workload.is_bench:
            return bench_argv(self.program, self.workload, self.scratch)
        return (*self.program.argv, *self.prefix, *self.workload.args)

    @property
    def cwd(self) -> Path:
        """Where the run starts: the target folder, or a Go benchmark's package folder (as
        `go test` runs a test binary, so that its testdata/ is found)."""
        if self.workload.kind == "go-bench":
            return self.program.root / (self.workload.package or ".")
        return self.program.root

    def spec(self) -> SandboxSpec:
        """The program's sandbox spec, with the scratch folder writable and, for a Python
        benchmark, no PYTHONPATH at start-up (its bootstrap puts the source roots on sys.path
        only after the harness is imported, so the tree cannot shadow it)."""
        spec = self.program.spec()
        if self.workload.kind in ("pytest-benchmark", "pyperf"):
            env = {k: v for k, v in spec.env.items() if k != "PYTHONPATH"}
            spec = replace(spec, env=env)
        if self.scratch is not None:
            spec = replace(spec, writable=(*spec.writable, self.scratch))
        return spec

    @property
    def stdin(self) -> Path | None:
        if self.workload.stdin is None:
            return None
        return self.program.root / self.workload.stdin
