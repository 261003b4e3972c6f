"""Sizing a known win: how many busy-loop iterations make the untouched build p % faster.

A probe build spins a fixed number of iterations (`PROBE_ITERATIONS`, per language, about 10 to
40 ms of work on a current x86 core). The base and the probe run in interleaved pairs on the
shortest representative workload; the median of the pairs' probe/base ratios, less one, is the
probe's cost as a share of the base. The wanted extra work D = W p / (1 - p)
(`inject.extra_for_win`), as a share of W, divided by the probe's share and multiplied by the
probe's iterations, is the iteration count. The shortest workload is the conservative choice:
there the injected work is the largest share, so every other workload sees a smaller win, and the
win the verdict can rest on is the one asked for.

Why a median of pair ratios and not the difference of two medians: a machine that switches
between a fast and a slow state for several runs at a time (logstat's 37 ms workload read 37-40
ms and 55-58 ms in runs of 5-10 on a 2-vCPU guest, CPU time following wall time) can put one
side's median in one state and the other side's in the other. Sized from the medians (51.7 ms
base, 67.3 ms probe), wins asked for as 10, 5 and 3 % measured 16.0, 7.9 and 5.3 % over 190
trials. The two runs of a pair share a state, so their ratio does not care which one it was.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from speedproof.calibration.inject import add_slowdown, extra_for_win
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import TargetToolchain, Tree
from speedproof.judge.measure.pinning import judge_elsewhere
from speedproof.judge.measure.runner import run_invocation
from speedproof.manifest import Manifest, Workload

# Iterations of the probe: CPython runs about 30 M simple loop iterations a second, Go 1 G.
PROBE_ITERATIONS = {"python": 1_000_000, "go": 40_000_000}
# Interleaved runs a side behind each median, after WARMUP_RUNS a side that are discarded. With
# 9 runs and no warm-up, a pilot started right after six builds read logstat's 37 ms base as
# 50 ms, and every injected win came out 1.35 times the size asked for (13.4 % for 10 %).
PILOT_RUNS = 15
WARMUP_RUNS = 3
# Below this share of the base wall the probe's cost is lost in the noise of 15 runs.
MIN_PROBE_SHARE = 0.15
# What PROBE_ITERATIONS cost on this machine (logstat's pilot: Go's 40 M added 44 % to 53 ms,
# 23 ms), and the share of the base a probe is sized to add. A longer workload gets a probe as
# many times larger: 40 M iterations added 8.6-10.6 % to a 744-796 ms run of a JSON-reading Go
# CLI, below MIN_PROBE_SHARE, and calibrate refused it. Up to about 90 ms (Go) or 160 ms
# (Python) the probe is as before.
PROBE_SECONDS = {"python": 0.033, "go": 0.02}
PROBE_SHARE = 0.3


@dataclass(frozen=True)
class Sizing:
    workload: str
    base_wall_s: float
    probe_wall_s: float
    # Median over pairs of probe wall / base wall, less one.
    probe_share: float
    probe_iterations: int
    iterations: dict[float, int]

    def to_json(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "base_wall_s": self.base_wall_s,
            "probe_wall_s": self.probe_wall_s,
            "probe_share": self.probe_share,
            "probe_iterations": self.probe_iterations,
            "iterations": {f"{win:g}": n for win, n in self.iterations.items()},
        }


def iterations_for_win(win_pct: float, probe_share: float, probe_iterations: int) -> int:
    """Busy-loop iterations that make the untouched build `win_pct` % faster.

    `probe_iterations` iterations cost `probe_share` of the base's wall; the win needs
    `extra_for_win(win_pct, 1.0)` of it.
    """
    if probe_share <= 0.0:
        raise ValueError(f"the probe must cost something, got a share of {probe_share!r}")
    return max(1, round(probe_iterations * extra_for_win(win_pct, 1.0) / probe_share))


def median_pair_share(base_walls: Sequence[float], probe_walls: Sequence[float]) -> float:
    """The median over pairs of probe / base, less one: the probe's cost as a share of the base."""
    if len(base_walls) != len(probe_walls) or not base_walls:
        raise ValueError("the probe's share needs the same number of base and probe runs, > 0")
    return statistics.median(p / b for b, p in zip(base_walls, probe_walls, strict=True)) - 1.0


def _walls(
    manifest: Manifest,
    sandbox: Sandbox,
    programs: Sequence[Program],
    workload: Workload,
    cpus: frozenset[int] | None,
) -> list[list[float]]:
    """Walls of each program on `workload` after the warm-up, the programs interleaved in ABBA
    order so that neither always runs first."""
    prefix = tuple(manifest.target.prefix)
    walls: list[list[float]] = [[] for _ in programs]
    with judge_elsewhere(cpus):
        for round_index in range(WARMUP_RUNS + PILOT_RUNS):
            order = list(enumerate(programs))
            for index, program in order if round_index % 2 == 0 else reversed(order):
                invocation = Invocation(program, workload, prefix)
                timeout = workload.timeout_s
                result = run_invocation(invocation, sandbox=sandbox, timeout_s=timeout, cpus=cpus)
                walls[index].append(result.wall_s)
    return [w[WARMUP_RUNS:] for w in walls]


def probe_iterations_for(language: str, base_wall_s: float) -> int:
    """The probe's iterations for a base whose shortest representative workload takes
    `base_wall_s`: the language's count, scaled so the probe adds about `PROBE_SHARE`."""
    scale = round(PROBE_SHARE * base_wall_s / PROBE_SECONDS[language])
    return PROBE_ITERATIONS[language] * max(1, scale)


def size_wins(
    manifest: Manifest,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
    base: Program,
    probe_tree: Tree,
    wins: Sequence[float],
    cpus: frozenset[int] | None,
) -> Sizing:
    """Build a probe in `probe_tree`, measure it against `base`, and size each win in `wins`.

    `cpus` are the CPUs the trials are timed on (`pinning.timed_cpus`): a win sized elsewhere
    would be sized for another machine."""
    language = manifest.target.language
    if language not in PROBE_ITERATIONS:
        raise InfrastructureError(f"calibrate cannot inject a slowdown into a {language} target")
    chosen = [w for w in manifest.workloads if w.tier == "representative"]
    # The builds just written are still being flushed to disk; a pilot that starts under that
    # writeback reads a slower base (and only the base: the probe's extra work is pure CPU).
    os.sync()
    bases = {w.id: statistics.median(_walls(manifest, sandbox, [base], w, cpus)[0]) for w in chosen}
    workload = min(chosen, key=lambda w: bases[w.id])
    probe_iterations = probe_iterations_for(language, bases[workload.id])
    add_slowdown(manifest, probe_tree.root, probe_iterations)
    built = toolchain.build(probe_tree)
    if not built.ok or built.program is None:
        raise InfrastructureError(f"the calibration probe does not build:\n{built.log[-2000:]}")
    base_walls, probe_walls = _walls(manifest, sandbox, [base, built.program], workload, cpus)
    base_wall = statistics.median(base_walls)
    share = median_pair_share(base_walls, probe_walls)
    if share < MIN_PROBE_SHARE:
        raise InfrastructureError(
            f"the calibration probe ({probe_iterations:,} iterations) added only "
            f"{share * 100:.1f} % to {base_wall * 1000:.2f} ms on workload "
            f"{workload.id}: too little to size a win from"
        )
    iterations = {win: iterations_for_win(win, share, probe_iterations) for win in wins}
    probe_wall = statistics.median(probe_walls)
    return Sizing(workload.id, base_wall, probe_wall, share, probe_iterations, iterations)
