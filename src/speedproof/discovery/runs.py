"""Which workloads discovery runs, how each run is checked, and how often a workload repeats.

Only `representative` workloads are profiled: they are the ones a verdict rests on, so they are
the ones whose hot functions matter. `holdout` workloads are never run (a proposer must never
learn from them), and `plausible` and `stress` ones are left out too, so that a function hot
only under a stress input does not steer a campaign judged on representative ones.

A workload too short to profile well is repeated (amplified) until the profile holds enough
(`goal`, in the profiler's own unit), within a cap of 50 runs or 30 s a workload: a 40 ms Go
workload gives ~4 samples at pprof's 100 Hz, so reaching 200 samples takes ~50 runs, ~2 s of
program time plus ~30 ms of sandbox start-up a run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from speedproof.discovery.hot import DiscoveryError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.measure.runner import run_invocation
from speedproof.manifest import Manifest, Workload

MAX_RUNS = 50
MAX_SECONDS = 30.0


@dataclass(frozen=True)
class Budget:
    max_runs: int = MAX_RUNS
    max_seconds: float = MAX_SECONDS


def representative(manifest: Manifest) -> tuple[Workload, ...]:
    """The workloads discovery may run: the representative tier, never any other.

    A workload whose inputs a judgement generates from a secret seed is left out: its inputs
    exist only inside a judgement (docs/adr/0030).
    """
    chosen = tuple(
        w for w in manifest.workloads if w.tier == "representative" and not w.placeholders
    )
    if not chosen:
        raise DiscoveryError(
            "the manifest has no representative workload to profile (generated ones are "
            "made only inside a judgement)"
        )
    return chosen


def run_checked(invocation: Invocation, *, sandbox: Sandbox, timeout_s: float) -> ProcessResult:
    """One profiled run; a run that times out or exits other than expected is an error.

    A profile of a failing run shows the error path, not the work the workload stands for.
    """
    workload = invocation.workload
    result = run_invocation(invocation, sandbox=sandbox, timeout_s=timeout_s)
    if result.timed_out:
        raise DiscoveryError(
            f"workload {workload.id!r} timed out after {timeout_s:.3g} s while being profiled"
        )
    if result.exit_code != workload.expected_exit:
        tail = result.tail(600).strip()
        raise DiscoveryError(
            f"workload {workload.id!r} exited {result.exit_code} while being profiled, the "
            f"manifest expects {workload.expected_exit}" + (f": {tail}" if tail else "")
        )
    return result


# One batch: (index of its first run, how many runs) -> (the amount the batch added, the seconds
# its runs took). Only run time counts against the budget: reading a profile is not the
# workload's cost (the first `go tool pprof` of a fresh cache builds pprof itself, ~15 s).
Batch = Callable[[int, int], tuple[float, float]]


def amplify(batch: Batch, goal: float, budget: Budget) -> tuple[int, float]:
    """Run batches until the profile holds `goal` or the budget is spent; (runs, amount).

    The first batch is one run; each later batch is sized from the amount and time a run has
    given so far, so a workload needs one or two profile reads, not one a run.
    """
    runs, amount, spent, size = 0, 0.0, 0.0, 1
    while True:
        added, seconds = batch(runs, size)
        amount, spent, runs = amount + added, spent + seconds, runs + size
        if amount >= goal or runs >= budget.max_runs or spent >= budget.max_seconds:
            return runs, amount
        per_run_amount, per_run_s = amount / runs, spent / runs
        wanted = math.ceil((goal - amount) / per_run_amount) if per_run_amount > 0 else runs
        fits = max(1, int((budget.max_seconds - spent) / per_run_s)) if per_run_s > 0 else 1
        size = max(1, min(wanted, fits, budget.max_runs - runs))


def timed(invocation: Invocation, *, sandbox: Sandbox, timeout_s: float) -> float:
    """`run_checked`, returning the run's wall seconds."""
    return run_checked(invocation, sandbox=sandbox, timeout_s=timeout_s).wall_s


def amplified_note(
    workload: str, runs: int, amount: float, goal: float, unit: str, budget: Budget
) -> str:
    if amount >= goal:
        return f"workload {workload!r}: {runs} run(s) gave {amount:.4g} {unit}"
    return (
        f"workload {workload!r}: {runs} run(s) gave only {amount:.4g} {unit} of the {goal:.4g} "
        f"wanted (cap: {budget.max_runs} runs or {budget.max_seconds:g} s); its shares are "
        "coarser"
    )
