"""Sizing a known win: how many busy-loop iterations make the untouched build p % faster.

A probe build spins a fixed number of iterations (`PROBE_ITERATIONS`, per language, about 10 to
40 ms of work on a current x86 core). The base and the probe run interleaved on the shortest
representative workload; the difference of their medians is the probe's cost, hence the cost of
one iteration; the wanted extra work D = W p / (1 - p) (`inject.extra_for_win`) divided by it is
the iteration count. The shortest workload is the conservative choice: there the injected work
is the largest share, so every other workload sees a smaller win, and the win the verdict can
rest on is the one asked for.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from speedproof.calibration.inject import add_slowdown, extra_for_win
from speedproof.errors import InfrastructureError
from speedproof.manifest import Manifest, Workload
from speedproof.measure.pinning import judge_elsewhere, timed_cpus
from speedproof.measure.runner import run_invocation
from speedproof.program import Invocation, Program
from speedproof.sandbox import Sandbox
from speedproof.toolchains.base import TargetToolchain, Tree

# Iterations of the probe: CPython runs about 30 M simple loop iterations a second, Go 1 G.
PROBE_ITERATIONS = {"python": 1_000_000, "go": 40_000_000}
# Interleaved runs a side behind each median, after WARMUP_RUNS a side that are discarded. With
# 9 runs and no warm-up, a pilot started right after six builds read logstat's 37 ms base as
# 50 ms, and every injected win came out 1.35 times the size asked for (13.4 % for 10 %).
PILOT_RUNS = 15
WARMUP_RUNS = 3
# Below this share of the base wall the probe's cost is lost in the noise of 15 runs.
MIN_PROBE_SHARE = 0.15


@dataclass(frozen=True)
class Sizing:
    workload: str
    base_wall_s: float
    probe_wall_s: float
    probe_iterations: int
    iterations: dict[float, int]

    @property
    def seconds_per_iteration(self) -> float:
        return (self.probe_wall_s - self.base_wall_s) / self.probe_iterations

    def to_json(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "base_wall_s": self.base_wall_s,
            "probe_wall_s": self.probe_wall_s,
            "probe_iterations": self.probe_iterations,
            "iterations": {f"{win:g}": n for win, n in self.iterations.items()},
        }


def _median_walls(
    manifest: Manifest, sandbox: Sandbox, programs: Sequence[Program], workload: Workload
) -> list[float]:
    """Median wall of each program on `workload`, the programs interleaved run by run."""
    prefix = tuple(manifest.target.prefix)
    walls: list[list[float]] = [[] for _ in programs]
    # Sized on the CPUs the trials are timed on, or the win would be sized for another machine.
    cpus = timed_cpus(manifest.policy.timed_cpus)
    with judge_elsewhere(cpus):
        for _ in range(WARMUP_RUNS + PILOT_RUNS):
            for index, program in enumerate(programs):
                invocation = Invocation(program, workload, prefix)
                timeout = workload.timeout_s
                result = run_invocation(invocation, sandbox=sandbox, timeout_s=timeout, cpus=cpus)
                walls[index].append(result.wall_s)
    return [statistics.median(w[WARMUP_RUNS:]) for w in walls]


def size_wins(
    manifest: Manifest,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
    base: Program,
    probe_tree: Tree,
    wins: Sequence[float],
) -> Sizing:
    """Build a probe in `probe_tree`, measure it against `base`, and size each win in `wins`."""
    language = manifest.target.language
    if language not in PROBE_ITERATIONS:
        raise InfrastructureError(f"calibrate cannot inject a slowdown into a {language} target")
    chosen = [w for w in manifest.workloads if w.tier == "representative"]
    # The builds just written are still being flushed to disk; a pilot that starts under that
    # writeback reads a slower base (and only the base: the probe's extra work is pure CPU).
    os.sync()
    bases = {w.id: _median_walls(manifest, sandbox, [base], w)[0] for w in chosen}
    workload = min(chosen, key=lambda w: bases[w.id])
    probe_iterations = PROBE_ITERATIONS[language]
    add_slowdown(manifest, probe_tree.root, probe_iterations)
    built = toolchain.build(probe_tree)
    if not built.ok or built.program is None:
        raise InfrastructureError(f"the calibration probe does not build:\n{built.log[-2000:]}")
    base_wall, probe_wall = _median_walls(manifest, sandbox, [base, built.program], workload)
    if probe_wall - base_wall < MIN_PROBE_SHARE * base_wall:
        raise InfrastructureError(
            f"the calibration probe ({probe_iterations:,} iterations) added only "
            f"{(probe_wall - base_wall) * 1000:.2f} ms to {base_wall * 1000:.2f} ms on workload "
            f"{workload.id}: too little to size a win from"
        )
    per_iteration = (probe_wall - base_wall) / probe_iterations
    iterations = {win: max(1, round(extra_for_win(win, base_wall) / per_iteration)) for win in wins}
    return Sizing(workload.id, base_wall, probe_wall, probe_iterations, iterations)
