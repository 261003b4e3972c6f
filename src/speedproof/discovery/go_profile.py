"""Profile a Go target with pprof: a profiling build, repeated runs, samples credited by line.

The profiling build (go_build) starts `runtime/pprof` CPU profiling when the environment names a
file. pprof samples at 100 Hz, so a 40 ms workload yields ~4 samples: each workload repeats, one
profile file a run, until the runs hold `min_samples` samples (runs.amplify). `go tool pprof
-raw` merges a batch of files and prints every stack with its frames' files and lines.

A sample is credited to the target's own code by its frames: a frame is the target's when its
file lies in the main module (with -trimpath pprof names files by module path) and inside the
target folder; the declaration holding the frame's line (go_source) is the function. The
innermost such frame gets the sample as self, so time spent in the standard library or the
runtime on a function's behalf (the regexp engine under `parseLine`, `mallocgc` under a function
that allocates) is that function's; every distinct own function on the stack gets it as cum.
Samples with no own frame (the garbage collector's workers, the scheduler, runtime start-up)
are credited to nobody and counted in the notes.
"""

from __future__ import annotations

import functools
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

from speedproof.discovery.go_build import GoPackage, binary_path, go_run, profiling_build
from speedproof.discovery.go_source import GENERATED_FILE, PROFILE_ENV
from speedproof.discovery.hot import DiscoveryError, Profile
from speedproof.discovery.pprof_raw import Frame, parse_raw
from speedproof.discovery.rank import Tallies, coverage_note, rank
from speedproof.discovery.runs import (
    Budget,
    amplified_note,
    amplify,
    representative,
    timed,
)
from speedproof.ground.invocation import Invocation
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import Context, TargetToolchain, Tree
from speedproof.judge.build.go import GoBuilder, GoTool
from speedproof.manifest import Manifest, Workload
from speedproof.source.function import SourceFunction
from speedproof.source.go import functions, package_name, parse

Stack = tuple[Frame, ...]


class GoSources:
    """The target's Go files, read once each with tree-sitter, found by pprof's file names."""

    def __init__(self, package: GoPackage, target: Path) -> None:
        self.package = package
        self.target = target
        self._files: dict[str, list[SourceFunction] | None] = {}

    def _path(self, name: str) -> Path | None:
        prefix = self.package.module_path + "/"
        if not name.startswith(prefix):
            return None
        relative = name[len(prefix) :]
        path = (self.package.module_folder / relative).resolve()
        generated = (self.package.folder / GENERATED_FILE).resolve()
        inside = path.is_relative_to(self.target) and not relative.startswith("vendor/")
        return path if inside and path != generated and path.is_file() else None

    def _units(self, name: str) -> list[SourceFunction] | None:
        if name not in self._files:
            path = self._path(name)
            self._files[name] = None if path is None else self._read(path)
        return self._files[name]

    def _read(self, path: Path) -> list[SourceFunction]:
        source = path.read_bytes()
        package = package_name(parse(source))
        if package != "main":
            folder = path.parent.relative_to(self.package.module_folder).as_posix()
            package = self.package.module_path + ("" if folder == "." else "/" + folder)
        return functions(source, path.relative_to(self.target).as_posix(), package)

    def is_own(self, frame: Frame) -> bool:
        return self._units(frame.file) is not None

    def unit_at(self, frame: Frame) -> SourceFunction | None:
        units = self._units(frame.file) or []
        return next((u for u in units if u.start_line <= frame.line <= u.end_line), None)


def credit(stacks: Counter[Stack], sources: GoSources) -> Tallies:
    tallies = Tallies()
    for stack, count in stacks.items():
        units = [u for u in (sources.unit_at(f) for f in stack) if u is not None]
        if units:
            tallies.add_self(units[0], count)
            tallies.of(units[0]).count += count
            tallies.add_cum(units, count)
        elif any(sources.is_own(f) for f in stack):
            tallies.outside_functions += count
    return tallies


class _GoRuns:
    """The profiled runs of the profiling binary and the stacks they gave, merged."""

    def __init__(self, context: Context, tool: GoTool, tree: Tree, folder: Path, sandbox: Sandbox):
        self.context = context
        self.tool = tool
        self.tree = tree
        self.folder = folder
        self.sandbox = sandbox
        self.stacks: Counter[Stack] = Counter()

    def batch(self, workload: Workload, first: int, count: int) -> tuple[float, float]:
        ran = [self._run(workload, i) for i in range(first, first + count)]
        files = [path for path, _ in ran]
        args = ["tool", "pprof", "-raw", *(str(f) for f in files)]
        said = go_run(self.context, self.tool, self.tree, self.folder, args, self.folder)
        raw = parse_raw(said.decode(errors="replace"))
        for samples, ids in raw.stacks:
            self.stacks[tuple(raw.frames(ids))] += samples
        return float(raw.total), sum(seconds for _, seconds in ran)

    def _run(self, workload: Workload, index: int) -> tuple[Path, float]:
        out = self.folder / "profiles" / f"{workload.id}-{index}.pprof"
        out.parent.mkdir(parents=True, exist_ok=True)
        binary = binary_path(self.context, self.folder)
        program = self.context.program(self.tree, (str(binary),), {PROFILE_ENV: str(out)})
        # The tree and the build are read-only to a run; the profile folder alone is not.
        program = replace(program, writable=(out.parent,))
        invocation = Invocation(program, workload, tuple(self.context.manifest.target.prefix))
        seconds = timed(invocation, sandbox=self.sandbox, timeout_s=workload.timeout_s)
        if not out.is_file() or out.stat().st_size == 0:
            raise DiscoveryError(
                f"workload {workload.id!r} exited {workload.expected_exit} as expected but left "
                "no CPU profile: the program ends some other way than returning from main or "
                "calling os.Exit in package main (log.Fatal, or os.Exit in another package)"
            )
        return out, seconds


def _tool(toolchain: TargetToolchain) -> GoTool:
    builder = toolchain.builder
    return builder.tool if isinstance(builder, GoBuilder) else GoTool.locate()


def profile_go(
    manifest: Manifest,
    tree: Tree,
    *,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
    top: int,
    min_samples: int,
    budget: Budget,
) -> Profile:
    tree = tree.checked()
    folder = tree.out / "discovery" / "go"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tool = _tool(toolchain)
    package = profiling_build(toolchain.context, tool, tree, folder)
    runs = _GoRuns(toolchain.context, tool, tree, folder, sandbox)
    workloads = representative(manifest)
    amplified: dict[str, int] = {}
    notes: list[str] = []
    for workload in workloads:
        batch = functools.partial(runs.batch, workload)
        count, samples = amplify(batch, float(min_samples), budget)
        amplified[workload.id] = count
        notes.append(amplified_note(workload.id, count, samples, min_samples, "samples", budget))
    tallies = credit(runs.stacks, GoSources(package, tree.root))
    total = float(sum(runs.stacks.values()))
    notes.append(coverage_note(tallies, total, "samples"))
    return Profile(
        functions=rank(tallies.by_definition, total, top),
        profiler="pprof",
        unit="samples",
        total=total,
        workloads=tuple(w.id for w in workloads),
        amplified=amplified,
        notes=tuple(notes),
    )
