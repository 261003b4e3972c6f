"""A note for a win the schedule ran out of pairs to resolve: the noise, and the pairs it needs.

A candidate that read a few percent faster and ended `inconclusive` at the last look leaves its
author with two readings: the win is not real, or the machine is too noisy for it at this many
pairs. The last look's own readings tell which is likely. From the winsorized standard deviation
of each representative primary reading's log ratios, `speedproof.stats.power` estimates the win
the schedule resolves nine times in ten and the pairs the observed improvement would need; the
judge adds that to the verdict's notes. A note only: the verdict is the policy's (ADR 0029).

The same estimate ends a schedule early (`beyond_budget`, docs/adr/0042): when the largest win
each reading's pairs make plausible is below the floor, or would be accepted by the last look
less often than not at the noise measured, and no worsening can still be shown, more pairs would
spend the time budget on a verdict that ends inconclusive; the rule stops and says so.
"""

from __future__ import annotations

import math

from speedproof.judge.policy.decide import could_still_improve, could_still_worsen, decide
from speedproof.judge.policy.evidence import Comparison, Evidence, PolicyRules
from speedproof.stats import Schedule
from speedproof.stats.paired import trimmed_standard_error
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
    evidence: Evidence, rules: PolicyRules, schedule: Schedule, knob: str = "[policy] max_pairs"
) -> tuple[str, ...]:
    """One note per representative primary reading that improved by at least the floor without
    significance, when the last look left the verdict inconclusive; otherwise none. `knob` is
    the setting that bounded the last look, which the note tells the user to raise."""
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
            notes.append(
                _note(c, found[1], schedule, len(readings), knob)
                + _instruction_word(evidence, c, rules)
            )
    return tuple(notes)


def _instruction_word(evidence: Evidence, c: Comparison, rules: PolicyRules) -> str:
    """What the instruction count of the same workload says about the unresolved win, if it was
    counted: a reading without noise can tell a real change from a noisy timer (a real sqlparse
    win read -3.60 % (p=0.56) on the clock and -12.6 % in instructions)."""
    count = next(
        (
            x
            for x in evidence.comparisons
            if x.metric == "instructions" and x.workload == c.workload
        ),
        None,
    )
    if count is None or not math.isfinite(count.improvement_pct):
        return ""
    if count.improvement_pct >= rules.accept_floor_pct:
        said = "supports a win of at least the floor"
    elif count.improvement_pct > 0:
        said = "supports a change, smaller than the floor"
    else:
        said = "does not support a win"
    return f" The instruction count of that workload read {count.render()}: it {said}."


def _note(c: Comparison, spread: float, schedule: Schedule, workloads: int, knob: str) -> str:
    resolved = resolvable_win_pct(spread, schedule, workloads=workloads)
    needed = pairs_to_resolve(c.improvement_pct, spread, schedule, workloads=workloads)
    then = (
        f"a true win of {c.improvement_pct:.1f}% would need about {needed} pairs "
        f"({knob} bounded this schedule at {schedule.max_pairs})"
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


# `beyond_budget` holds each reading's win at its estimate plus 1.28 standard errors, the upper
# end of a one-sided 90 % bound: the largest win its pairs make plausible. On simulated streams
# at the machine's noise this stops most no-change candidates within 3-4 looks and loses about
# 2-4 % of true 5 % wins (docs/adr/0042); it can never cause an accept or a reject.
PLAUSIBLE_Z = 1.28
# ... and asks whether the last look would accept that win at least half the time.
STOP_POWER = 0.5


def beyond_budget(
    evidence: Evidence,
    rules: PolicyRules,
    schedule: Schedule,
    knob: str = "[policy] max_measure_s",
) -> str | None:
    """A note when the schedule should stop early because no change its pairs make plausible
    could be shown by its last look: no win reaching the floor, no worsening beyond a limit;
    None while some outcome is still within reach. `knob` bounded the last look."""
    if evidence.final or not schedule.stops_early:
        return None
    workloads = len(timed_primary_readings(evidence, rules.primary_metric)) or 1
    hopes: list[tuple[float, float, Comparison]] = []
    worst: Comparison | None = None
    sides = (
        (could_still_improve(evidence, rules), 1.0),
        (could_still_worsen(evidence, rules), -1.0),
    )
    for readings, sign in sides:
        for c in readings:
            bar = rules.accept_floor_pct if sign > 0 else rules.limit_for(c.metric)
            found = spread_of(c)
            if found is None or not math.isfinite(c.improvement_pct):
                return None
            se = trimmed_standard_error(found[1], c.n) * 100.0
            plausible = sign * c.improvement_pct + PLAUSIBLE_Z * se
            reach = resolvable_win_pct(found[1], schedule, workloads=workloads, power=STOP_POWER)
            if plausible >= max(bar, reach):
                return None
            if sign > 0:
                hopes.append((plausible, found[1], c))
            elif not hopes:
                worst = c
    if hopes:
        hope, spread, c = max(hopes, key=lambda item: item[0])
        return _stop_note(c, hope, spread, schedule, rules, workloads, knob)
    if worst is None:
        return None
    return (
        f"measurement stopped early, at {worst.n} of the {schedule.max_pairs} pairs the time "
        f"budget allows ({knob}): no worsening beyond a limit is plausible any "
        f"more ({worst.metric} on workload {worst.workload} read {worst.render()})."
    )


def _stop_note(
    c: Comparison,
    hope: float,
    spread: float,
    schedule: Schedule,
    rules: PolicyRules,
    workloads: int,
    knob: str,
) -> str:
    if hope < rules.accept_floor_pct:
        would = f"below the {rules.accept_floor_pct:g}% floor"
    else:
        needed = pairs_to_resolve(hope, spread, schedule, workloads=workloads, power=STOP_POWER)
        count = f"about {needed}" if needed is not None else "more than 1000"
        would = f"would need {count} pairs to be accepted half the time"
    return (
        f"measurement stopped early, at {c.n} of the {schedule.max_pairs} pairs the time "
        f"budget allows ({knob}): {c.metric} on workload {c.workload} "
        f"improved by {c.improvement_pct:.2f}%, and the largest win its pairs make plausible, "
        f"{hope:.2f}%, {would} at the noise measured (winsorized sd {spread * 100:.1f}% per "
        "pair)."
    )
