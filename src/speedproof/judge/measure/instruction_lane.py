"""The instruction lane of one target: both sides counted under Cachegrind on each workload it
covers, the baseline's counts kept per base revision (docs/adr/0021, 0064).

A campaign judges many candidates against one base, and the baseline's count cannot change, so
a count taken once serves every later candidate of that revision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.behaviour.check import BehaviourResult, ReferenceCheck
from speedproof.judge.early_end import Ended
from speedproof.judge.measure.instructions import (
    STATISTICAL_RUNS,
    InstructionReading,
    baseline_fault,
    count_instructions,
    instruction_comparison,
    sampled,
)
from speedproof.judge.measure.refusals import candidate_refusal
from speedproof.judge.measure.runner import measurement_fault
from speedproof.judge.measure.sequential_rule import Progress
from speedproof.judge.policy.evidence import Comparison
from speedproof.manifest import Manifest, Workload

# Records one gate: name, passed, seconds, reasons, detail (`Judge._gate` for one candidate).
GateSink = Callable[[str, bool, float, tuple[str, ...], dict[str, Any]], None]
# A side's program able to read a workload's unseen inputs (`Judge._visible`).
Visible = Callable[[Program, Workload], Program]


class InstructionLane:
    """Counts for one target at one base revision, the baseline's cached across candidates."""

    def __init__(self, *, sandbox: Sandbox, base_rev: str, progress: Progress) -> None:
        self.sandbox = sandbox
        self.base_rev = base_rev
        self.progress = progress
        # Baseline instruction counts per (base revision, workload, filled args, stdin).
        self._baseline: dict[tuple[str, ...], InstructionReading] = {}

    def compare(
        self,
        judged: Manifest,
        programs: Mapping[str, Program],
        behaviour: BehaviourResult,
        *,
        visible: Visible,
        gate: GateSink,
    ) -> list[Comparison]:
        """The lane on every representative workload, and on the unseen ones (holdouts, twins)
        when the verdict rests on it (docs/adr/0064)."""
        rests_on = judged.policy.primary_metric == "instructions"
        tiers = ("representative", "holdout") if rests_on else ("representative",)
        found: list[Comparison] = []
        for workload in judged.workloads:
            if workload.tier not in tiers:
                continue
            start = time.perf_counter()
            self.progress("instructions", f"{workload.id}: counting under Cachegrind")
            check = behaviour.check_for(workload.id)
            readings = self.count_sides(programs, workload, check, judged, visible)
            comparison = instruction_comparison(
                readings["baseline"],
                readings["candidate"],
                tier=workload.tier,
                alpha=judged.policy.alpha,
            )
            gate(
                f"instructions:{workload.id}",
                comparison.exact or comparison.finite,
                time.perf_counter() - start,
                () if comparison.exact else (comparison.note,),
                {
                    "baseline": [r.ir for r in readings["baseline"].runs],
                    "candidate": [r.ir for r in readings["candidate"].runs],
                    "figure": comparison.render(),
                },
            )
            fault = baseline_fault(readings["baseline"])
            if fault is not None:
                raise measurement_fault(workload.id, fault)
            refused = candidate_refusal(
                readings["baseline"], readings["candidate"], rests_on_instructions=rests_on
            )
            if refused is not None:
                raise Ended(refused)
            found.append(comparison)
        return found

    def count_sides(
        self,
        programs: Mapping[str, Program],
        workload: Workload,
        check: ReferenceCheck,
        judged: Manifest,
        visible: Visible,
    ) -> dict[str, InstructionReading]:
        """Both sides' counts on one workload, at once (counts do not depend on the load); the
        baseline's from the cache when this revision's were taken before."""
        prefix = tuple(judged.target.prefix)
        timeout_s = judged.instructions.timeout_s

        def count(side: str, runs: int) -> InstructionReading:
            return count_instructions(
                Invocation(visible(programs[side], workload), workload, prefix),
                sandbox=self.sandbox,
                timeout_s=timeout_s,
                repeats=runs,
                check=check,
            )

        # Generated inputs are new every judgement: the key holds the filled args.
        key = (self.base_rev, workload.id, *workload.args, workload.stdin or "")
        known = self._baseline.get(key)
        first = repeats(judged, "candidate", known)
        with ThreadPoolExecutor(max_workers=2) as pool:
            candidate = pool.submit(count, "candidate", first)
            baseline = known
            if baseline is None:
                baseline = count("baseline", repeats(judged, "baseline"))
            found = candidate.result()
        if sampled(baseline) and not baseline.stable and not sampled(found) and found.counted:
            # The baseline's counts vary (Go): the candidate's single count cannot be compared
            # with a sample; it is counted up to the same number of runs.
            more = count("candidate", STATISTICAL_RUNS - len(found.runs))
            found = replace(found, runs=(*found.runs, *more.runs))
        if known is None and (baseline.stable or sampled(baseline)):
            self._baseline[key] = baseline
        return {"baseline": baseline, "candidate": found}


def repeats(judged: Manifest, side: str, baseline: InstructionReading | None = None) -> int:
    """Runs a side under Cachegrind.

    The baseline always runs `repeats` times: that is the lane's proof that the target
    counts deterministically under the lane's settings. A candidate runs once when the
    lane is a secondary reading (its count only informs), and `repeats` times when the
    verdict rests on it, so a candidate that brings nondeterminism cannot win on one lucky
    count. Each run of a Go example costs 3 to 12 s under Cachegrind (docs/adr/0021).
    """
    lane = judged.instructions
    if side == "baseline" or judged.policy.primary_metric == "instructions":
        return lane.repeats
    if baseline is not None and not baseline.stable:
        return STATISTICAL_RUNS  # known to vary: a sample from the start
    return 1
