"""Pairs from real runs: the judge's source of pairs for the one sequential rule.

`SequentialMeasurement` measures one baseline/candidate pair of programs in ABBA pairs through
the sandbox, and `measure.sequential_rule.SequentialRule` decides when to stop, exactly as it
does for recorded and simulated pairs.

A baseline run that fails or differs from its reference in any round (holdout and twin rounds
included) ends the measurement with an infrastructure error (`runner.measurement_fault`), after
the round's `measure:` gate is recorded: the fault is not the candidate's, so it never becomes
a reason of the verdict.

A round is contended when the CPU stall rule of `measure.environment` (or its load-average
fallback) says so; the rule measures it again. Each round's `measure:` gate records its stall
share.

The judge and `speedproof calibrate` both measure through `SequentialMeasurement`, so the
figures calibrate reports are the figures of the rule the judge applies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.behaviour.check import Visible, as_built
from speedproof.judge.measure.environment import (
    PRESSURE_CPU,
    contention_note,
    contention_source,
    measurement_contended,
    stall_share,
)
from speedproof.judge.measure.runner import (
    PairSeries,
    RepetitionCheck,
    Round,
    Sample,
    TimeoutRule,
    measure_pairs,
    measurement_fault,
    private_network,
)
from speedproof.judge.measure.sequential_rule import Progress, SequentialRule, say_nothing
from speedproof.judge.policy.evidence import Comparison, Evidence
from speedproof.manifest import Manifest, Workload
from speedproof.stats import Schedule

# (series index, workload id, sample): called between runs, outside the timed region.
SampleSink = Callable[[int, str, Sample], None]
# (gate name, passed, seconds, reasons, detail): a measured series as a ledger gate.
GateSink = Callable[[str, bool, float, tuple[str, ...], dict[str, Any]], None]


def _ignore_sample(series: int, workload: str, sample: Sample) -> None:
    """The default sample sink: keep nothing."""


def _ignore_gate(
    name: str, passed: bool, seconds: float, reasons: tuple[str, ...], detail: dict[str, Any]
) -> None:
    """The default gate sink: keep nothing."""


def schedule_for(
    manifest: Manifest,
    pairs: int | None = None,
    *,
    budget_multiple: float = 1.0,
    stops_early: bool = True,
) -> Schedule:
    """The schedule a judgement uses: `pairs` (a caller's override) or the manifest's.

    `budget_multiple` scales the sequential schedule's time budget and its cap alike, and
    `stops_early=False` keeps it measuring to its last look: `verify` measures with twice the
    judge's budget and never stops early (docs/adr/0042, 0053).
    """
    policy = manifest.policy
    if pairs is not None:
        return Schedule.fixed(pairs, policy.alpha)
    if manifest.reported is not None:
        return Schedule.fixed(manifest.reported.repeats, policy.alpha)
    if policy.pairs is not None:
        return Schedule.fixed(policy.pairs, policy.alpha)
    return Schedule(
        round_pairs=policy.round_pairs,
        max_pairs=max(policy.round_pairs, round(policy.max_pairs * budget_multiple)),
        alpha=policy.alpha,
        budget_s=(policy.max_measure_s * budget_multiple) or None,
        stops_early=stops_early,
    )


@dataclass
class Sinks:
    """Where measurements go as they are taken."""

    sample: SampleSink = _ignore_sample
    gate: GateSink = _ignore_gate
    progress: Progress = say_nothing


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
    # inputs (`speedproof.judge.inputs.unseen`). The default runs every workload as built.
    visible: Visible = field(default=as_built, kw_only=True)
    # The kernel's CPU pressure file, read at both ends of every round (`environment`).
    pressure: Path = field(default=PRESSURE_CPU, kw_only=True)
    # Per workload, the timeout its first series set (later rounds keep it and skip warm-up).
    limits: dict[str, float] = field(default_factory=dict, init=False)
    next_series: int = field(default=0, init=False)

    def run(self) -> Evidence:
        """The one sequential rule applied to pairs measured here."""
        rule = SequentialRule(
            self.manifest,
            self.schedule,
            source=self,
            fixed_readings=self.fixed_readings,
            progress=self.sinks.progress,
        )
        evidence = rule.run()
        detail = {
            "budget_s": self.schedule.budget_s,
            "max_pairs": rule.schedule.max_pairs,
            "looks": rule.state.look,
            "pairs": rule.schedule.pairs_at(rule.state.look),
        }
        self.sinks.gate("schedule", True, 0.0, (), detail)
        return evidence

    # ----- the source of pairs --------------------------------------------------------------

    def take(self, workload: Workload, pairs: int, first_pair: int, look: int) -> PairSeries:
        return self._series(workload, pairs, first_pair, look)

    def contended(self, series: PairSeries) -> bool:
        window = series.loads[-1]
        private = private_network(self.sandbox, self.programs["baseline"])
        return measurement_contended(
            window.before, window.after, series.cpu_per_wall, private_network=private
        )

    def note(self, series: PairSeries) -> str | None:
        """Say when contention could not be read from CPU pressure."""
        window = series.loads[-1]
        return contention_note(window.before, window.after)

    def _series(self, workload: Workload, pairs: int, before: int, look: int) -> PairSeries:
        index = self.next_series
        self.next_series += 1
        self.sinks.progress("measure", f"{workload.id}: {pairs} pairs (look {look})")
        prefix = tuple(self.manifest.target.prefix)

        def record(sample: Sample) -> None:
            self.sinks.sample(index, workload.id, sample)

        where = Round(
            first_pair=before,
            warmup=0 if workload.id in self.limits else 1,
            limit_s=self.limits.get(workload.id),
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
        self.limits.setdefault(workload.id, measured.timeouts_s[-1])
        self._report(index, look, workload, measured, time.perf_counter() - start)
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
            "contended": self.contended(measured),
            "mismatches": [m.describe() for m in measured.mismatches],
        }
        error = measured.measurement_error
        reasons = () if error is None else (error.message,)
        passed = error is None and not measured.mismatches
        self.sinks.gate(f"measure:{workload.id}", passed, seconds, reasons, detail)
