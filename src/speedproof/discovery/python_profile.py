"""Profile a Python target with the standard library's cProfile, inside the sandbox.

Each run is the target's own invocation (`python -m module ARGS` or `python script ARGS`, with
the source roots on PYTHONPATH and the toolchain's environment), started through a short
runner given to the same interpreter with `-c`. The runner does what `python -m cProfile -o OUT
-m module ARGS` does (runpy with `alter_sys`, the script's folder first on sys.path) with one
difference that matters: `python -m cProfile` swallows SystemExit and always exits 0, so a
workload that fails would be profiled as if it worked. The runner writes the profile in a
`finally` and lets the exit status through, so a run is checked like any other.

cProfile is deterministic: every call is counted and timed, so repetition does not add
resolution the way it does for a sampler. What varies between runs is interference, a
scheduler slice landing on whichever function runs. A workload repeats until the profile holds
`min_samples` milliseconds of profiled time (0.2 s at the default 200): there, one 4 ms
interruption moves a function's share by at most 2 points.
"""

from __future__ import annotations

import functools
import pstats
import shutil
from dataclasses import replace
from pathlib import Path

from speedproof.discovery.hot import DiscoveryError, Profile
from speedproof.discovery.python_credit import Crediting
from speedproof.discovery.python_source import PythonSources
from speedproof.discovery.rank import coverage_note, rank
from speedproof.discovery.runs import (
    Budget,
    amplified_note,
    amplify,
    representative,
    timed,
)
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import TargetToolchain, Tree
from speedproof.judge.build.python import source_roots
from speedproof.manifest import Manifest, Workload

# Profiled seconds a workload must reach, per sample asked for (see the module docstring).
SECONDS_PER_SAMPLE = 0.001
# A profiled run may take this many times the workload's timeout: cProfile slowed textstat
# 1.3-2.4x (the more calls, the more), and a deep chain of tiny calls can reach 4-5x.
PROFILER_SLOWDOWN = 5.0

_RUNNER = """
import cProfile, os, runpy, sys
out = os.path.abspath(sys.argv[1])
if sys.argv[2] == "-m":
    del sys.argv[:3]
    run = lambda: runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    del sys.argv[:2]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    run = lambda: runpy.run_path(sys.argv[0], run_name="__main__")
profiler = cProfile.Profile()
try:
    profiler.runcall(run)
finally:
    profiler.dump_stats(out)
"""


def profiled_argv(program: Program, out: Path) -> tuple[str, ...]:
    """The program's own command with cProfile in front, writing its statistics to `out`."""
    argv = program.argv
    module_form = len(argv) == 3 and argv[1] == "-m"
    if not module_form and len(argv) != 2:
        raise DiscoveryError(f"cannot profile {argv!r}: expected `python -m MODULE` or a script")
    return (argv[0], "-c", _RUNNER, str(out), *argv[1:])


def _load(paths: list[Path]) -> pstats.Stats:
    try:
        return pstats.Stats(*(str(p) for p in paths))
    except (OSError, TypeError, ValueError, EOFError) as exc:
        raise DiscoveryError(f"a cProfile file is unreadable: {exc}") from exc


class _PythonRuns:
    """The profiled runs of one target, their files, and the statistics merged so far."""

    def __init__(self, manifest: Manifest, program: Program, folder: Path, sandbox: Sandbox):
        self.manifest = manifest
        self.program = program
        self.folder = folder
        self.sandbox = sandbox
        self.merged = pstats.Stats()

    def batch(self, workload: Workload, first: int, count: int) -> tuple[float, float]:
        ran = [self._run(workload, i) for i in range(first, first + count)]
        stats = _load([path for path, _ in ran])
        self.merged.add(stats)
        return float(stats.total_tt), sum(s for _, s in ran)  # type: ignore[attr-defined]

    def _run(self, workload: Workload, index: int) -> tuple[Path, float]:
        out = self.folder / f"{workload.id}-{index}.prof"
        # The tree and the build are read-only to a run; the profile folder alone is not.
        program = replace(
            self.program, argv=profiled_argv(self.program, out), writable=(out.parent,)
        )
        invocation = Invocation(program, workload, tuple(self.manifest.target.prefix))
        seconds = timed(
            invocation, sandbox=self.sandbox, timeout_s=workload.timeout_s * PROFILER_SLOWDOWN
        )
        if not out.is_file():
            raise DiscoveryError(f"workload {workload.id!r} ran but left no cProfile file")
        return out, seconds


def profile_python(
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
    built = toolchain.build(tree)
    if not built.ok or built.program is None:
        raise DiscoveryError(f"the baseline does not build:\n{built.log[-2000:]}")
    folder = tree.out / "discovery" / "python"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    runs = _PythonRuns(manifest, built.program, folder, sandbox)
    goal = min_samples * SECONDS_PER_SAMPLE
    workloads = representative(manifest)
    amplified: dict[str, int] = {}
    notes: list[str] = []
    for workload in workloads:
        count, seconds = amplify(functools.partial(runs.batch, workload), goal, budget)
        amplified[workload.id] = count
        notes.append(amplified_note(workload.id, count, seconds, goal, "profiled seconds", budget))
    sources = PythonSources(tree.root, source_roots(manifest, tree))
    stats = runs.merged.stats  # type: ignore[attr-defined]
    tallies = Crediting(stats, sources).credit()
    total = float(runs.merged.total_tt)  # type: ignore[attr-defined]
    notes.append(coverage_note(tallies, total, "profiled seconds"))
    return Profile(
        functions=rank(tallies.by_definition, total, top),
        profiler="cProfile",
        unit="calls",
        total=total,
        workloads=tuple(w.id for w in workloads),
        amplified=amplified,
        notes=tuple(notes),
    )
