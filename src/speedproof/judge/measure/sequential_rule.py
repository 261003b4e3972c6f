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
most `max_pairs` (docs/adr/0042), the budget first raised to what a win at the floor needs at the
round's measured spread, within `max_total_measure_s` (`budget_sizing`, docs/adr/0078). Before
each further round, `resolution.beyond_budget` asks
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

from speedproof.judge.measure.budget_sizing import (
    CAP,
    FLOOR,
    PER_WORKLOAD,
    TOTAL,
    Sizing,
    size_budget,
)
from speedproof.judge.measure.readings import lane_comparisons
from speedproof.judge.measure.resolution import beyond_budget, unresolved_win_notes
from speedproof.judge.measure.runner import PairSeries
from speedproof.judge.policy.decide import carry_over_settled_on, decide, keep_measuring, streaks
from speedproof.judge.policy.evidence import TWIN_SUFFIX, Comparison, Evidence
from speedproof.manifest import Manifest, Workload
from speedproof.stats import Schedule

Progress = Callable[[str, str], None]

# The twin of an accept's workload is measured 5 pairs at a time: the fewest that give its
# trimmed interval a figure (4 samples a side) with one pair to spare, so a large honest win
# settles in one step, where it took as many pairs as the representatives (10 to 50). An unseen
# reading that has not settled after its first pairs is measured further in steps of this size.
TWIN_STEP_PAIRS = 5
# Twins whose content a table keyed by content still answers (docs/adr/0048, 0059): seen input.
SEEN_TWIN_KINDS = ("copy", "lines")
# A series ends when its next round would take a workload's timed runs past the time budget by
# more than this factor. The budget sized the last look from the first round's mean pair cost,
# whose own error is about 2 % (10 pairs at 9 % noise a run: 9 / sqrt(20)); 10 % is five of
# those, so only a machine that really got slower (contention, a throttled CPU) ends a series
# before its planned last look, not the noise of the first estimate.
BUDGET_GRACE = 1.10
# The metrics every timed run gives; a budget is sized from the primary one's spread when it is
# one of them, from wall time otherwise (an instruction count has no per-pair spread).
TIMED = ("wall", "cpu", "memory")


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
    # The schedule's time budget in seconds of timed runs a workload may take, kept after the
    # first round has sized the last look from it (`Schedule.within_budget` drops it).
    budget_s: float | None = field(default=None, init=False)
    # How the first round sized that budget, and the knob that bounds the last look.
    sizing: Sizing | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.budget_s = self.schedule.budget_s

    def run(self) -> Evidence:
        """Look after look until settled; then the holdout workloads if the verdict accepts."""
        chosen = [w for w in self.manifest.workloads if w.tier == "representative"]
        rules = self.manifest.rules()
        evidence = self._look(chosen)
        planned = self.schedule
        while keep_measuring(evidence, rules):
            ended = self._budget_ended(chosen)
            if ended is not None:
                evidence = self._last_look(ended)
                break
            stop = beyond_budget(evidence, rules, self.schedule, self._knob())
            if stop is not None:
                self.state.notes.append(stop)
                evidence = self.evidence()
                break
            self.state.earlier_accepts, self.state.earlier_rejects = streaks(evidence, rules)
            self.progress("round", f"look {self.state.look} is not settled; one more round")
            evidence = self._look(chosen)
            planned = self.schedule
        unresolved = unresolved_win_notes(evidence, rules, planned, self._knob(raise_it=True))
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
            self._size(workloads)
        return self.evidence()

    def _size(self, workloads: Sequence[Workload]) -> None:
        """Size the last look from the first round: its pairs' cost and spread, before any test
        reads them (`budget_sizing`)."""
        policy, pair_s = self.manifest.policy, self._pair_seconds(workloads)
        scale = (self.budget_s or 0.0) / policy.max_measure_s if policy.max_measure_s else 1.0
        metric = policy.primary_metric if policy.primary_metric in TIMED else "wall"
        ratios = [
            ([b.value(metric) for b, _ in pairs], [c.value(metric) for _, c in pairs])
            for pairs in (self.state.series[w.id].complete_pairs() for w in workloads)
        ]
        self.sizing = size_budget(
            self.schedule,
            per_workload_s=self.budget_s or 0.0,
            total_s=policy.max_total_measure_s * scale,
            floor_pct=policy.accept_floor_pct,
            pair_s=pair_s,
            ratios=ratios,
        )
        self.budget_s = self.sizing.budget_s
        cap = self.schedule.max_pairs
        self.schedule = replace(self.schedule, budget_s=self.budget_s).within_budget(pair_s)
        if self.schedule.max_pairs >= cap:
            self.sizing = replace(self.sizing, knob=CAP)
        self.progress("budget", self.sizing.describe(self.schedule.max_pairs))

    def _budget_ended(self, workloads: Sequence[Workload]) -> str | None:
        """Why the time budget makes the current look the last, or None while the next round
        fits. Read from what the pairs cost in time alone, never from the differences they
        show, so the look it ends at may spend the alpha left (`Schedule.ending_at`)."""
        look = self.state.look
        if self.budget_s is None or look >= self.schedule.looks():
            return None
        step = self.schedule.pairs_at(look + 1) - self.schedule.pairs_at(look)
        over = [
            (spent, spent + step * spent / pairs, w.id)
            for w in workloads
            if (pairs := len(self.state.series[w.id].complete_pairs()))
            and (spent := self._seconds(w.id)) + step * spent / pairs > self.budget_s * BUDGET_GRACE
        ]
        if not over:
            return None
        spent, projected, workload = max(over)
        knob = self._knob()
        return (
            f"the {self.budget_s:g} s measuring budget ran out ({knob}): "
            f"workload {workload} had taken {spent:.1f} s of timed runs, and the next round "
            f"of {step} pairs would take it to about {projected:.1f} s"
        )

    def _knob(self, *, raise_it: bool = False) -> str:
        """The setting that bounded the last look; with `raise_it`, the one to raise for more
        pairs (a last look already sized to the floor's needs is raised by the total)."""
        if self.sizing is None:
            return CAP if self.budget_s is None else PER_WORKLOAD
        if raise_it and self.sizing.knob == FLOOR:
            return TOTAL
        return self.sizing.knob

    def _last_look(self, why: str) -> Evidence:
        """The current look made the last one: it spends the alpha the looks before left."""
        look, planned = self.state.look, self.schedule
        self.schedule = planned.ending_at(look)
        self.state.notes.append(
            f"look {look} of {planned.planned_looks()} was the last: {why}. It tested at the "
            f"alpha the looks before left, {self.schedule.alpha_at(look):.4g}, where the plan "
            f"gave it {planned.alpha_at(look):.4g}."
        )
        self.progress("budget", f"look {look} is the last: the time budget ran out")
        return self.evidence()

    def _seconds(self, workload: str) -> float:
        """The seconds of timed runs, both sides, of `workload`'s kept pairs so far."""
        return sum(b.wall_s + c.wall_s for b, c in self.state.series[workload].complete_pairs())

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
            seen_inputs=tuple(
                w.id
                for w in self.manifest.workloads
                if w.id.endswith(TWIN_SUFFIX) and w.twin in SEEN_TWIN_KINDS
            ),
        )

    def _holdout(self, evidence: Evidence) -> Evidence:
        """An accept stands only once the holdout workloads are measured and do not regress, and
        its win reappears on every reading with unseen input (`policy.carry_over`).

        Of the twins, only that of the workload the accept rests on is measured: each further
        twin would add a whole series to every accept (on logstat, 10 pairs of a 40 ms workload:
        +2.2 s of 10 s). Each unseen workload is measured until carry-over is settled on it
        (`_unseen`).
        """
        verdict = decide(evidence, self.manifest.rules())
        if verdict.verdict != "accepted" or verdict.rests_on is None:
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
            # A holdout is judged for regressions too, so it starts with the pairs the
            # representatives had; a twin starts with one step.
            first = min(TWIN_STEP_PAIRS, pairs) if workload.id == wanted else pairs
            self._unseen(workload, first, verdict.rests_on)
        return replace(self.evidence(), final=True)

    def _unseen(self, workload: Workload, first: int, rests_on: str) -> None:
        """One holdout-tier workload, in steps until carry-over is settled on it.

        Settled once its interval lies wholly at or above the share of the win that must carry
        over, or wholly below it (`policy.carry_over_settled_on`). An interval that still
        reaches both sides gets further steps: as many pairs as the schedule's last look (the
        pairs the time budget fits), and no more than its own time budget, so a reading too
        noisy to tell at the representatives' pairs is not called a missing win. On a Go CLI at
        9 % noise a pair, a true -11.5 % win needs about 15 pairs on its twin to clear the
        quarter that must carry over, where its representative was accepted at 10.
        """
        rules = self.manifest.rules()
        cap = max(first, self.schedule.max_pairs)
        done, step = 0, first
        while step > 0:
            self._round(workload, step, done)
            done += step
            if carry_over_settled_on(self.evidence(), rules, rests_on, workload.id):
                return
            step = min(TWIN_STEP_PAIRS, cap - done)
            if step > 0 and not self._fits(workload.id, step):
                return

    def _fits(self, workload: str, pairs: int) -> bool:
        """Whether `pairs` more pairs of `workload` keep it within the time budget."""
        if self.budget_s is None:
            return True
        done = len(self.state.series[workload].complete_pairs())
        spent = self._seconds(workload)
        return done == 0 or spent + pairs * spent / done <= self.budget_s * BUDGET_GRACE


def _contention_notes(contended: dict[str, list[int]]) -> list[str]:
    return [
        f"workload {workload} was measured on a contended machine (CPU stall share or, without "
        f"it, load above the contention threshold) in look(s) "
        f"{', '.join(str(look) for look in looks)}; its figures are noisier."
        for workload, looks in contended.items()
    ]
