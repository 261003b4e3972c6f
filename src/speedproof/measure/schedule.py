"""The sequential schedule: measure in rounds of pairs until the verdict is certain.

One look is: every representative workload gets `round_pairs` more ABBA pairs, the readings are
computed at the look's share of the error budget (`Schedule.alpha_at`, docs/adr/0020) with Holm
across workloads within each metric, and `policy.keep_measuring` says whether another round can
still change the verdict. The hard maximum (`max_pairs`) ends what is undecided as inconclusive.

A baseline run that fails or differs from its reference in any round (holdout and twin rounds
included) ends the measurement with an infrastructure error (`runner.measurement_fault`), after
the round's `measure:` gate is recorded: the fault is not the candidate's, so it never becomes
a reason of the verdict.

A round measured while the machine was contended (the CPU stall rule of `measure.environment`,
or its load-average fallback) is measured again, once per candidate; the contended round's
samples stay in the ledger but not in the analysis, and a second contended round is kept and
flagged in the verdict's notes. Each round's `measure:` gate records its stall share.

The judge and `speedproof calibrate` both measure through `SequentialMeasurement`, so the
figures calibrate reports are the figures of the rule the judge applies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from speedproof.evidence import TWIN_SUFFIX, Comparison, Evidence
from speedproof.gates.behaviour import Visible, as_built
from speedproof.manifest import Manifest, Workload
from speedproof.measure.environment import (
    PRESSURE_CPU,
    contention_note,
    contention_source,
    measurement_contended,
    stall_share,
)
from speedproof.measure.readings import lane_comparisons
from speedproof.measure.resolution import unresolved_win_notes
from speedproof.measure.runner import (
    PairSeries,
    RepetitionCheck,
    Round,
    Sample,
    TimeoutRule,
    measure_pairs,
    measurement_fault,
    private_network,
)
from speedproof.policy import decide, keep_measuring, streaks
from speedproof.program import Invocation, Program, Side
from speedproof.sandbox import Sandbox
from speedproof.stats import Schedule

# (series index, workload id, sample): called between runs, outside the timed region.
SampleSink = Callable[[int, str, Sample], None]
# (gate name, passed, seconds, reasons, detail): a measured series as a ledger gate.
GateSink = Callable[[str, bool, float, tuple[str, ...], dict[str, Any]], None]
Progress = Callable[[str, str], None]


def _ignore_sample(series: int, workload: str, sample: Sample) -> None:
    """The default sample sink: keep nothing."""


def _ignore_gate(
    name: str, passed: bool, seconds: float, reasons: tuple[str, ...], detail: dict[str, Any]
) -> None:
    """The default gate sink: keep nothing."""


def _quiet(stage: str, message: str) -> None:
    """The default progress sink: say nothing."""


def schedule_for(manifest: Manifest, pairs: int | None = None) -> Schedule:
    """The schedule a judgement uses: `pairs` (a caller's override) or the manifest's."""
    policy = manifest.policy
    if pairs is not None:
        return Schedule.fixed(pairs, policy.alpha)
    if manifest.reported is not None:
        return Schedule.fixed(manifest.reported.repeats, policy.alpha)
    if policy.pairs is not None:
        return Schedule.fixed(policy.pairs, policy.alpha)
    return Schedule(round_pairs=policy.round_pairs, max_pairs=policy.max_pairs, alpha=policy.alpha)


@dataclass
class Sinks:
    """Where measurements go as they are taken."""

    sample: SampleSink = _ignore_sample
    gate: GateSink = _ignore_gate
    progress: Progress = _quiet


@dataclass
class Measured:
    """The state of a schedule: series per workload and what the measurement itself noticed."""

    series: dict[str, PairSeries] = field(default_factory=dict)
    limits: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Looks whose kept round was measured on a contended machine, per workload.
    contended: dict[str, list[int]] = field(default_factory=dict)
    remeasured: bool = False
    next_series: int = 0
    look: int = 0
    # Looks in a row, just before the current one, that would have accepted (rejected).
    earlier_accepts: int = 0
    earlier_rejects: int = 0


@dataclass
class SequentialMeasurement:
    """Measures one baseline/candidate pair of programs under the manifest's schedule."""

    manifest: Manifest
    sandbox: Sandbox
    programs: dict[Side, Program]
    checks: Callable[[str], RepetitionCheck]
    schedule: Schedule
    sinks: Sinks = field(default_factory=Sinks)
    # Readings from other lanes (instructions, binary size), added to every look's evidence.
    fixed_readings: Sequence[Comparison] = ()
    # The CPUs every timed run is pinned to (None: not pinned), `pinning.timed_cpus` of the
    # manifest's setting, read once by the caller before anything is measured: inside a series
    # the judge's own mask is narrowed (`pinning.judge_elsewhere`) and would read wrong. No
    # default, so that no caller measures unpinned by forgetting it.
    cpus: frozenset[int] | None = field(kw_only=True)
    # Each side's program as it must run one workload: able to read that workload's unseen
    # inputs (`speedproof.inputs.unseen`). The default runs every workload as built.
    visible: Visible = field(default=as_built, kw_only=True)
    # The kernel's CPU pressure file, read at both ends of every round (`environment`).
    pressure: Path = field(default=PRESSURE_CPU, kw_only=True)

    def run(self) -> Evidence:
        """Look after look until settled; then the holdout workloads if the verdict accepts."""
        chosen = [w for w in self.manifest.workloads if w.tier == "representative"]
        state = Measured()
        rules = self.manifest.rules()
        evidence = self._look(state, chosen)
        while keep_measuring(evidence, rules):
            state.earlier_accepts, state.earlier_rejects = streaks(evidence, rules)
            self.sinks.progress("round", f"look {state.look} is not settled; one more round")
            evidence = self._look(state, chosen)
        unresolved = unresolved_win_notes(evidence, rules, self.schedule)
        evidence = replace(evidence, measurement_notes=(*evidence.measurement_notes, *unresolved))
        return self._holdout(state, evidence)

    # ----- one look -----------------------------------------------------------------------

    def _look(self, state: Measured, workloads: Sequence[Workload]) -> Evidence:
        state.look += 1
        before = self.schedule.pairs_at(state.look - 1) if state.look > 1 else 0
        pairs = self.schedule.pairs_at(state.look) - before
        for workload in workloads:
            self._round(state, workload, pairs, before)
        return self.evidence(state)

    def _round(self, state: Measured, workload: Workload, pairs: int, before: int) -> None:
        series = self._series(state, workload, pairs, before)
        _note_once(state, series)
        if series.clean and self._contended(series):
            if not state.remeasured:
                state.remeasured = True
                state.notes.append(
                    f"the machine was contended while round {state.look} of workload "
                    f"{workload.id} was measured; that round was measured again and the "
                    "contended one left out of the analysis."
                )
                self.sinks.progress("contended", f"{workload.id}: measuring the round again")
                series = self._series(state, workload, pairs, before)
            if self._contended(series):
                state.contended.setdefault(workload.id, []).append(state.look)
        known = state.series.get(workload.id)
        state.series[workload.id] = series if known is None else known.extend(series)

    def _contended(self, series: PairSeries) -> bool:
        window = series.loads[-1]
        private = private_network(self.sandbox, self.programs["baseline"])
        return measurement_contended(
            window.before, window.after, series.cpu_per_wall, private_network=private
        )

    def _series(self, state: Measured, workload: Workload, pairs: int, before: int) -> PairSeries:
        index = state.next_series
        state.next_series += 1
        self.sinks.progress("measure", f"{workload.id}: {pairs} pairs (look {state.look})")
        prefix = tuple(self.manifest.target.prefix)

        def record(sample: Sample) -> None:
            self.sinks.sample(index, workload.id, sample)

        where = Round(
            first_pair=before,
            warmup=0 if workload.id in state.limits else 1,
            limit_s=state.limits.get(workload.id),
            cpus=self.cpus,
        )
        start = time.perf_counter()
        measured = measure_pairs(
            Invocation(self.visible(self.programs["baseline"], workload), workload, prefix),
            Invocation(self.visible(self.programs["candidate"], workload), workload, prefix),
            pairs=pairs,
            sandbox=self.sandbox,
            check=self.checks(workload.id),
            timeout=TimeoutRule.from_manifest(self.manifest.policy, workload),
            on_sample=record,
            round_=where,
            metrics=self._metric_names(),
            pressure=self.pressure,
        )
        state.limits.setdefault(workload.id, measured.timeouts_s[-1])
        self._report(index, state.look, workload, measured, time.perf_counter() - start)
        fault = measured.baseline_fault
        if fault is not None:
            raise measurement_fault(workload.id, fault)
        return measured

    def _metric_names(self) -> tuple[str, ...]:
        reported = self.manifest.reported
        return () if reported is None else tuple(reported.directions())

    def _report(
        self, index: int, look: int, workload: Workload, measured: PairSeries, seconds: float
    ) -> None:
        window = measured.loads[-1]
        detail = {
            "workload": workload.id,
            "series": index,
            "look": look,
            "pairs": measured.pairs,
            "timeout_s": measured.timeouts_s[-1],
            "load_before": window.before.one,
            "load_after": window.after.one,
            "cpu_stall_share": stall_share(window.before, window.after),
            "contention_from": contention_source(window.before, window.after),
            "contended": self._contended(measured),
            "mismatches": [m.describe() for m in measured.mismatches],
        }
        error = measured.measurement_error
        reasons = () if error is None else (error.message,)
        passed = error is None and not measured.mismatches
        self.sinks.gate(f"measure:{workload.id}", passed, seconds, reasons, detail)

    # ----- evidence -----------------------------------------------------------------------

    def evidence(self, state: Measured) -> Evidence:
        """The evidence of the looks so far, at the current look's level."""
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

    def _holdout(self, state: Measured, evidence: Evidence) -> Evidence:
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
        pairs = self.schedule.pairs_at(state.look)
        self.sinks.progress("holdout", f"measuring {len(holdout)} holdout workload(s)")
        for workload in holdout:
            self._round(state, workload, pairs, 0)
        return replace(self.evidence(state), final=True)


def _note_once(state: Measured, series: PairSeries) -> None:
    """Say once in the verdict's notes when contention could not be read from CPU pressure."""
    window = series.loads[-1]
    note = contention_note(window.before, window.after)
    if note is not None and note not in state.notes:
        state.notes.append(note)


def _contention_notes(contended: dict[str, list[int]]) -> list[str]:
    return [
        f"workload {workload} was measured on a contended machine (CPU stall share or, without "
        f"it, load above the contention threshold) in look(s) "
        f"{', '.join(str(look) for look in looks)}; its figures are noisier."
        for workload, looks in contended.items()
    ]
