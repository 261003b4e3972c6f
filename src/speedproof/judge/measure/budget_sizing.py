"""The measuring budget sized to the workload: the pairs a win at the floor needs, within a total.

`[policy] max_measure_s` (20 s of timed runs a workload, both sides) buys 200 pairs of a 40 ms
workload but 10 of a 1 s one, and 10 pairs at a real CLI's noise resolve almost nothing: a real
~10 % sqlparse win read -3.60 % (p=0.56) after 10 pairs, where its exact instruction count read
-12.6 %. So once the first round is measured, before any test reads it, the spread of each
representative workload's per-pair log ratios of the primary metric (the winsorized standard
deviation the trimmed t's error is built from) says how many pairs the schedule's last look needs
to accept a win at the floor nine times in ten (`stats.power.pairs_to_resolve`). A workload's
budget is the larger of `max_measure_s` and what those pairs cost at the slowest workload's pair
cost, and every representative workload together may take at most `max_total_measure_s`
(`max_measure_s` each is always allowed; the total only bounds the raise).

Sized from the spread alone, never from the difference the pairs show: the spread of a paired
difference does not depend on its mean, so the level each look spends is still fixed before any
test sees what the candidate changed (docs/adr/0042, 0078).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from speedproof.stats import Schedule
from speedproof.stats.paired import log_ratio_winsorized_sd
from speedproof.stats.power import MAX_SUGGESTED_PAIRS, pairs_to_resolve

PER_WORKLOAD = "[policy] max_measure_s"
TOTAL = "[policy] max_total_measure_s"
CAP = "[policy] max_pairs"
FLOOR = "[policy] accept_floor_pct"


@dataclass(frozen=True)
class Sizing:
    """A workload's time budget in seconds, what it was sized from, and the knob that bounds
    the last look it gives: `PER_WORKLOAD`, `TOTAL`, `CAP`, or `FLOOR` where the pairs a win at
    the floor needs were granted in full."""

    budget_s: float
    knob: str
    spread: float | None = None
    needed_pairs: int | None = None

    def describe(self, last_pairs: int) -> str:
        if self.spread is None:
            return f"the time budget allows {last_pairs} pairs ({self.knob})"
        needed = (
            f"about {self.needed_pairs}"
            if self.needed_pairs is not None
            else f"more than {MAX_SUGGESTED_PAIRS}"
        )
        return (
            f"at the first round's noise (winsorized sd {self.spread * 100:.1f}% per pair) a win "
            f"at the floor needs {needed} pairs; the budget allows {last_pairs} ({self.knob})"
        )


def size_budget(
    schedule: Schedule,
    *,
    per_workload_s: float,
    total_s: float,
    floor_pct: float,
    pair_s: float,
    ratios: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> Sizing:
    """The budget of each representative workload, from the first round.

    `pair_s` is what one pair of the slowest workload costs, both sides; `ratios` holds each
    representative workload's (baseline, candidate) values of the primary metric so far.
    `total_s = 0` turns the raise off.
    """
    spreads = [
        log_ratio_winsorized_sd(list(base), list(cand))
        for base, cand in ratios
        if len(base) >= schedule.round_pairs // 2 and min(*base, *cand) > 0
    ]
    if total_s <= 0 or pair_s <= 0 or not spreads:
        return Sizing(per_workload_s, PER_WORKLOAD)
    spread = max(spreads)
    workloads = len(ratios)
    needed = pairs_to_resolve(floor_pct, spread, schedule, workloads=workloads) if spread else 0
    wanted = (needed if needed is not None else schedule.max_pairs) * pair_s
    allowed = max(per_workload_s, total_s / workloads)
    if wanted <= per_workload_s:
        return Sizing(per_workload_s, PER_WORKLOAD, spread, needed)
    if schedule.max_pairs * pair_s <= min(wanted, allowed):
        return Sizing(schedule.max_pairs * pair_s, CAP, spread, needed)
    if wanted <= allowed:
        return Sizing(wanted, FLOOR, spread, needed)
    return Sizing(allowed, TOTAL, spread, needed)
