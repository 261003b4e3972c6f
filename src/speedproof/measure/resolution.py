"""A note for a win the schedule ran out of pairs to resolve: the noise, and the pairs it needs.

A candidate that read a few percent faster and ended `inconclusive` at the last look leaves its
author with two readings: the win is not real, or the machine is too noisy for it at this many
pairs. The last look's own readings tell which is likely. From the winsorized standard deviation
of each representative primary reading's log ratios, `speedproof.stats.power` estimates the win
the schedule resolves nine times in ten and the pairs the observed improvement would need; the
judge adds that to the verdict's notes. A note only: the verdict is the policy's (ADR 0029).
"""

from __future__ import annotations

import math

from speedproof.evidence import Comparison, Evidence, PolicyRules
from speedproof.policy import decide
from speedproof.stats import Schedule
from speedproof.stats.power import pairs_to_resolve, resolvable_win_pct

# (standard deviation, winsorized standard deviation) of one reading's per-pair log ratios.
Spread = tuple[float, float]


def timed_primary_readings(evidence: Evidence, primary_metric: str) -> list[Comparison]:
    """The timed lane's readings of the primary metric on representative workloads."""
    return [
        c
        for c in evidence.comparisons
        if c.lane == "timed" and c.metric == primary_metric and c.tier == "representative"
    ]


def spread_of(c: Comparison) -> Spread | None:
    """The spread of a paired reading's log ratios; None where no ratio was formed."""
    extra = dict(c.extra)
    sd, winsorized = extra.get("log_ratio_sd"), extra.get("log_ratio_winsorized_sd")
    return None if sd is None or winsorized is None else (sd, winsorized)


def unresolved_win_notes(
    evidence: Evidence, rules: PolicyRules, schedule: Schedule
) -> tuple[str, ...]:
    """One note per representative primary reading that improved by at least the floor without
    significance, when the last look left the verdict inconclusive; otherwise none."""
    if not evidence.final or decide(evidence, rules).verdict != "inconclusive":
        return ()
    readings = timed_primary_readings(evidence, rules.primary_metric)
    notes = []
    for c in readings:
        found = spread_of(c)
        if (
            found is not None
            and not c.significant
            and math.isfinite(c.improvement_pct)
            and rules.accept_floor_pct <= c.improvement_pct < 100.0
        ):
            notes.append(_note(c, found[1], schedule, len(readings)))
    return tuple(notes)


def _note(c: Comparison, spread: float, schedule: Schedule, workloads: int) -> str:
    resolved = resolvable_win_pct(spread, schedule, workloads=workloads)
    needed = pairs_to_resolve(c.improvement_pct, spread, schedule, workloads=workloads)
    then = (
        f"a true win of {c.improvement_pct:.1f}% would need about {needed} pairs "
        "([policy] max_pairs)"
        if needed is not None
        else "a true win of that size would need more than 1000 pairs here; a deterministic "
        "lane (instructions) can resolve it"
    )
    return (
        f"{c.metric} on workload {c.workload} improved by {c.improvement_pct:.2f}% without "
        f"significance at {c.n} pairs. At the noise measured (winsorized sd "
        f"{spread * 100:.1f}% per pair) the last look finds a win of {resolved:.1f}% about nine "
        f"times in ten; {then}."
    )
