"""The one rule that turns a stream of pairs into evidence, look by look, until it is settled.

Every verdict that rests on timed pairs comes from `SequentialRule.run`: the judge's, `verify`'s,
`speedproof calibrate`'s and the campaign's stability check measure real programs through it
(`measure.schedule.SequentialMeasurement` is the source of their pairs), and the benchmarks and
simulations replay recorded or synthetic pairs through it (`measure.replay.RecordedPairs`). A
rule scored on recordings is therefore the rule the judge applies, holdouts, twins, contention
re-measurement and notes included; only where the pairs come from differs.

One look is: every representative workload gets the schedule's next round of pairs, the readings
are computed at the look's share of the error budget (`Schedule.alpha_at`, docs/adr/0020) with
Holm across workloads within each metric, and `policy.keep_measuring` says whether another round
can still change the verdict. The schedule's last look ends what is undecided as inconclusive.

A schedule with a time budget (`[policy] max_measure_s`) is sized once the first round is
measured: its last look is the pairs the slowest representative workload fits in the budget, at
most `max_pairs` (docs/adr/0042). Before each further round, `resolution.beyond_budget` asks
whether the wins the intervals still allow could be resolved by that last look; when none could
and no worsening can still be shown, the rule stops with a note saying what the best of them
would need.

A round the source calls contended is measured again, once per candidate; the contended round's
samples stay in the ledger but not in the analysis, and a second contended round is kept and
flagged in the verdict's notes.

Layering runs one way: `stats` (numbers) <- `policy` (verdicts from evidence) <- this module
(evidence from pairs) <- its sources (pairs from programs or records).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from speedproof.evidence import TWIN_SUFFIX, Comparison, Evidence
from speedproof.manifest import Manifest, Workload
from speedproof.measure.readings import lane_comparisons
from speedproof.measure.resolution import beyond_budget, unresolved_win_notes
from speedproof.measure.runner import PairSeries
from speedproof.policy import carry_over_settled, decide, keep_measuring, streaks
from speedproof.stats import Schedule

Progress = Callable[[str, str], None]

# The twin of an accept's workload is measured 5 pairs at a time: the fewest that give its
# trimmed interval a figure (4 samples a side) with one pair to spare, so a large honest win
# settles in one step, where it took as many pairs as the representatives (10 to 50).
TWIN_STEP_PAIRS = 5


class PairSource(Protocol):
    """Where a rule's pairs come from: real runs of two programs, or a record of them."""

    def take(self, workload: Workload, pairs: int, first_pair: int, look: int) -> PairSeries:
        """`pairs` more pairs of `workload`, numbered from `first_pair`, for look `look`."""
        ...

    def contended(self, series: PairSeries) -> bool:
        """True when the machine was too busy while `series` was taken for it to count."""
        ...

    def note(self, series: PairSeries) -> str | None:
        """Something the verdict's notes must say about how `series` was taken, or None."""
        ...


def say_nothing(stage: str, message: str) -> None:
    """The default progress sink: say nothing."""


@dataclass
class RuleState:
    """The state of a schedule: series per workload and what the measurement itself noticed."""

    series: dict[str, PairSeries] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Looks whose kept round was measured on a contended machine, per workload.
    contended: dict[str, list[int]] = field(default_factory=dict)
    remeasured: bool = False
    look: int = 0
    # Looks in a row, just before the current one, that would have accepted (rejected).
    earlier_accepts: int = 0
    earlier_rejects: int = 0


@dataclass
class SequentialRule:
    """The manifest's schedule and policy applied to the pairs a source gives."""

    manifest: Manifest
    schedule: Schedule
    source: PairSource
    # Readings from other lanes (instructions, binary size), added to every look's evidence.
    fixed_readings: Sequence[Comparison] = ()
    progress: Progress = say_nothing
    state: RuleState = field(default_factory=RuleState)

    def run(self) -> Evidence:
        """Look after look until settled; then the holdout workloads if the verdict accepts."""
        chosen = [w for w in self.manifest.workloads if w.tier == "representative"]
        rules = self.manifest.rules()
        evidence = self._look(chosen)
        while keep_measuring(evidence, rules):
            stop = beyond_budget(evidence, rules, self.schedule)
            if stop is not None:
                self.state.notes.append(stop)
                evidence = self.evidence()
                break
            self.state.earlier_accepts, self.state.earlier_rejects = streaks(evidence, rules)
            self.progress("round", f"look {self.state.look} is not settled; one more round")
            evidence = self._look(chosen)
        unresolved = unresolved_win_notes(evidence, rules, self.schedule)
        evidence = replace(evidence, measurement_notes=(*evidence.measurement_notes, *unresolved))
        return self._holdout(evidence)

    # ----- one look -----------------------------------------------------------------------

    def _look(self, workloads: Sequence[Workload]) -> Evidence:
        state = self.state
        state.look += 1
        before = self.schedule.pairs_at(state.look - 1) if state.look > 1 else 0
        pairs = self.schedule.pairs_at(state.look) - before
        for workload in workloads:
            self._round(workload, pairs, before)
        if self.schedule.budget_s is not None:
            self.schedule = self.schedule.within_budget(self._pair_seconds(workloads))
            self.progress("budget", f"the time budget allows {self.schedule.max_pairs} pairs")
        return self.evidence()

    def _pair_seconds(self, workloads: Sequence[Workload]) -> float:
        """What one pair of the slowest workload costs in timed runs, both sides, in seconds."""
        costs = [
            statistics.fmean(b.wall_s + c.wall_s for b, c in pairs)
            for pairs in (self.state.series[w.id].complete_pairs() for w in workloads)
            if pairs
        ]
        return max(costs, default=0.0)

    def _round(self, workload: Workload, pairs: int, before: int) -> None:
        state = self.state
        series = self.source.take(workload, pairs, before, state.look)
        note = self.source.note(series)
        if note is not None and note not in state.notes:
            state.notes.append(note)
        if series.clean and self.source.contended(series):
            if not state.remeasured:
                state.remeasured = True
                state.notes.append(
                    f"the machine was contended while round {state.look} of workload "
                    f"{workload.id} was measured; that round was measured again and the "
                    "contended one left out of the analysis."
                )
                self.progress("contended", f"{workload.id}: measuring the round again")
                series = self.source.take(workload, pairs, before, state.look)
            if self.source.contended(series):
                state.contended.setdefault(workload.id, []).append(state.look)
        known = state.series.get(workload.id)
        state.series[workload.id] = series if known is None else known.extend(series)

    # ----- evidence -----------------------------------------------------------------------

    def evidence(self) -> Evidence:
        """The evidence of the looks so far, at the current look's level."""
        state = self.state
        alpha = self.schedule.alpha_at(state.look)
        tiers = {w.id: w.tier for w in self.manifest.workloads}
        comparisons = lane_comparisons(state.series, self.manifest, tiers=tiers, alpha=alpha)
        failures = [
            f"measurement of {wid} failed: {s.measurement_error.message}"
            for wid, s in state.series.items()
            if s.measurement_error is not None
        ]
        mismatches = [m.describe() for s in state.series.values() for m in s.mismatches]
        return Evidence(
            behaviour_matches=not mismatches,
            failure_summary=tuple(failures),
            safety_checks_passed=True,
            representative_evidence=True,
            comparisons=(*comparisons, *self.fixed_readings),
            behaviour_detail=tuple(mismatches),
            look=state.look,
            final=state.look >= self.schedule.looks(),
            alpha=alpha,
            earlier_accepts=state.earlier_accepts,
            earlier_rejects=state.earlier_rejects,
            measurement_notes=(*state.notes, *_contention_notes(state.contended)),
        )

    def _holdout(self, evidence: Evidence) -> Evidence:
        """An accept stands only once the holdout workloads are measured and do not regress.

        Of the twins, only that of the workload the accept rests on is measured: it is the one
        the carry-over rule reads (`policy.carry_over`), and each further twin would add a whole
        series to every accept (on logstat, 10 pairs of a 40 ms workload: +2.2 s of 10 s).
        """
        verdict = decide(evidence, self.manifest.rules())
        if verdict.verdict != "accepted":
            return evidence
        wanted = f"{verdict.rests_on}{TWIN_SUFFIX}"
        holdout = [
            w
            for w in self.manifest.workloads
            if w.tier == "holdout" and (not w.id.endswith(TWIN_SUFFIX) or w.id == wanted)
        ]
        if not holdout:
            return evidence
        pairs = self.schedule.pairs_at(self.state.look)
        self.progress("holdout", f"measuring {len(holdout)} holdout workload(s)")
        for workload in holdout:
            if workload.id == wanted:
                self._twin(workload, pairs, workload.id.removesuffix(TWIN_SUFFIX))
            else:
                self._round(workload, pairs, 0)
        return replace(self.evidence(), final=True)

    def _twin(self, workload: Workload, pairs: int, rests_on: str) -> None:
        """The twin of the workload an accept rests on, in steps until carry-over is settled.

        At most as many pairs as the representatives had; fewer once the twin's interval lies
        clearly on one side of the share that must carry over (`policy.carry_over_settled`).
        """
        rules = self.manifest.rules()
        done = 0
        while done < pairs:
            step = min(TWIN_STEP_PAIRS, pairs - done)
            self._round(workload, step, done)
            done += step
            if carry_over_settled(self.evidence(), rules, rests_on):
                return


def _contention_notes(contended: dict[str, list[int]]) -> list[str]:
    return [
        f"workload {workload} was measured on a contended machine (CPU stall share or, without "
        f"it, load above the contention threshold) in look(s) "
        f"{', '.join(str(look) for look in looks)}; its figures are noisier."
        for workload, looks in contended.items()
    ]
