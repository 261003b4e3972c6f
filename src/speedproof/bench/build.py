"""Building what benchmark workloads run, in speedproof's build step.

Go: each package a go-bench workload names gets its test binary, compiled once per side by
`go test -c` (`toolchains.go.compile_test_binary`, the test gate's way: only the Go toolchain
runs, over a read-only tree, with the tests' build flags), into the side's build folder. No
command of the target's or the candidate's builds it. A Go library measured by its benchmarks
alone has no main package, so the program binary is built only when some workload runs it.

Python: the target's own build (byte-compiling the source roots) and, for the benchmarks, the
interpreter and speedproof's runner module, shown read-only to every run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.bench.command import PYTHON_KEY, RUNNER_FOLDER
from speedproof.ground.toolchain import Builder, BuildResult, Context, Tree, process_log, safe_name
from speedproof.judge.build.go import GoTool, compile_test_binary
from speedproof.judge.tests.go_test_args import go_test_args


@dataclass(frozen=True)
class BenchBuilder:
    """The target's builder, followed by what its benchmark workloads run."""

    context: Context
    inner: Builder
    go: GoTool | None = None
    python: Path | None = None

    def versions(self) -> dict[str, str]:
        return self.inner.versions()

    def build(self, tree: Tree) -> BuildResult:
        manifest = self.context.manifest
        if self.go is not None:
            runs_program = any(not w.is_bench for w in manifest.workloads)
            built = self.inner.build(tree) if runs_program else self._bare(tree)
            return self._go_benches(tree, built) if built.ok else built
        built = self.inner.build(tree)
        if not built.ok or built.program is None or self.python is None:
            return built
        program = replace(
            built.program,
            benches={PYTHON_KEY: self.python},
            readable=(*built.program.readable, RUNNER_FOLDER),
        )
        return replace(built, program=program)

    def _bare(self, tree: Tree) -> BuildResult:
        """A Go library's program: nothing to run but its benchmarks."""
        return BuildResult(True, self.context.program(tree, ()), "", 0.0, ())

    def _go_benches(self, tree: Tree, built: BuildResult) -> BuildResult:
        assert self.go is not None and built.program is not None
        manifest = self.context.manifest
        flags = go_test_args(manifest.tests.args).build if manifest.tests.runner == "go" else ()
        packages = list(dict.fromkeys(w.package or "." for w in manifest.benchmarks))
        start = time.perf_counter()
        log, commands, benches = built.log, list(built.commands), {}
        for index, package in enumerate(packages):
            binary = tree.out / "go-bench" / f"{index}-{safe_name(package)}.test"
            argv, result = compile_test_binary(self.context, self.go, tree, package, binary, flags)
            commands.append(argv)
            log += process_log(result)
            if not result.ok or not binary.is_file():
                if result.ok:
                    log += f"go test -c wrote no test binary for {package!r}: has it tests?\n"
                seconds = built.duration_s + time.perf_counter() - start
                return BuildResult(False, None, log, seconds, tuple(commands))
            benches[package] = binary
        program = replace(
            built.program,
            benches=benches,
            fresh_per_run=(*built.program.fresh_per_run, *benches.values()),
        )
        seconds = built.duration_s + time.perf_counter() - start
        return BuildResult(True, program, log, seconds, tuple(commands))
