"""The machine's noise as calibrate's no-change trials measured it, and what it lets the judge see.

Every a/a and null trial ends with paired readings of the primary metric on each representative
workload; their per-pair log ratios are pure noise. Per workload, the median over those trials
of the ratios' standard deviation and winsorized standard deviation is the noise; from the
winsorized one, `speedproof.stats.power` estimates the smallest win the schedule's last look
accepts nine times in ten, and the pairs a win of twice the floor would need (twice, because a
win that large is accepted at its first significant look without the confirmation a smaller
one waits for, `policy.CONFIRM_MULTIPLE`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from speedproof.judge.measure.resolution import Spread, spread_of, timed_primary_readings
from speedproof.judge.policy.decide import CONFIRM_MULTIPLE
from speedproof.judge.policy.evidence import Evidence
from speedproof.stats import Schedule
from speedproof.stats.power import pairs_to_resolve, resolvable_win_pct

# The trial kinds whose two sides run the same code: their ratios measure noise alone.
NO_CHANGE = ("a/a", "null")


@dataclass(frozen=True)
class WorkloadNoise:
    """One representative workload's noise per pair and what the schedule resolves at it."""

    workload: str
    readings: int
    sd_pct: float
    winsorized_sd_pct: float
    resolvable_win_pct: float
    # A win of `CONFIRM_MULTIPLE` × the floor, and the max_pairs that resolve it (None: more
    # than `power.MAX_SUGGESTED_PAIRS`).
    win_pct: float
    pairs_for_win: int | None


def reading_spreads(evidence: Evidence, primary_metric: str) -> dict[str, Spread]:
    """Workload -> spread of the timed primary readings on representative workloads."""
    return {
        c.workload: found
        for c in timed_primary_readings(evidence, primary_metric)
        if (found := spread_of(c)) is not None
    }


def summarise(
    spreads: Iterable[Mapping[str, Spread]], schedule: Schedule, floor_pct: float
) -> list[WorkloadNoise]:
    """Per workload, in first-seen order: the medians over the no-change trials' spreads."""
    by_workload: dict[str, list[Spread]] = {}
    for trial in spreads:
        for workload, spread in trial.items():
            by_workload.setdefault(workload, []).append(spread)
    workloads = len(by_workload)
    win = CONFIRM_MULTIPLE * floor_pct
    return [
        _noise(workload, found, schedule, workloads, win) for workload, found in by_workload.items()
    ]


def _noise(
    workload: str, found: Sequence[Spread], schedule: Schedule, workloads: int, win: float
) -> WorkloadNoise:
    sd = statistics.median(s for s, _ in found)
    winsorized = statistics.median(w for _, w in found)
    return WorkloadNoise(
        workload=workload,
        readings=len(found),
        sd_pct=sd * 100.0,
        winsorized_sd_pct=winsorized * 100.0,
        resolvable_win_pct=resolvable_win_pct(winsorized, schedule, workloads=workloads),
        win_pct=win,
        pairs_for_win=pairs_to_resolve(win, winsorized, schedule, workloads=workloads),
    )
