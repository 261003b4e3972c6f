"""The timed lane: baseline and candidate measured in interleaved, counterbalanced pairs.

One series is: the load averages and the CPU pressure-stall counter; `warmup` discarded runs a
side (baseline first); then `pairs` pairs in ABBA order, pair 0 baseline-then-candidate, pair 1
candidate-then-baseline, and so on, so that a drift in the machine (a warming cache, a
throttling CPU, a neighbour starting) lands on both sides equally; then both readings again.
Every run, warm-ups included, is checked against the behaviour gate's reference before the
next one starts: a candidate whose output changes on its 17th run is caught, recorded as a
`Mismatch`, and the series stops. A baseline run that mismatches, crashes, times out or drops
its metrics is the baseline's fault, not the candidate's (`PairSeries.baseline_fault`): the
caller stops the judgement with `measurement_fault`, an infrastructure error.

The timed region is `run_process` alone: removing stale output files, fingerprinting and the
`on_sample` callback happen between runs, outside the clock. See docs/adr/0003-timed-lane.md.

Environment size: every run gets `SPEEDPROOF_ENV_PAD`, a variable of a random length between 0
and 4095 bytes, drawn afresh per run for both sides. The size of the environment moves the
initial stack, and with it the alignment of everything on it; Mytkowicz et al. ("Producing
wrong data without doing anything obviously wrong!", ASPLOS 2009) measured run-time shifts of
several percent from that alone. A fixed environment would hand one side a lucky alignment for
the whole series; a random one turns the bias into noise that both sides share, which the
pairs then average out. 4096 covers every alignment within a page.

A series can also be one round of a sequential schedule: `first_pair` numbers its pairs after
the rounds before it, `warmup=0` skips the warm-ups a round after the first does not need, and
`limit_s` carries the first round's per-run timeout forward.

Reported metrics: a workload that prints a JSON object of metrics on its last stdout line (the
reported lane) names them in `metrics`; each run's values are kept on its sample, and a run
that does not print them is a failure of the series, never a silent zero. A benchmark workload
(`speedproof.bench`) reports through its own output, and a run that writes a results file gets a
fresh scratch folder for it (`reported.results_folder`), made before the run and removed after
it, outside the timed region like everything else between runs.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult, run_process
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.measure.environment import PRESSURE_CPU, LoadSnapshot, load_snapshot
from speedproof.judge.measure.pinning import judge_elsewhere
from speedproof.judge.measure.placement import place_afresh
from speedproof.judge.measure.reported import MetricsError, read_metrics, results_folder
from speedproof.manifest import Policy, Workload

# wall, cpu and memory, or the name of a reported metric.
Metric = str
FailureKind = Literal["timeout", "crash", "metrics"]
METRICS: tuple[Metric, ...] = ("wall", "cpu", "memory")
ENV_PAD_VARIABLE = "SPEEDPROOF_ENV_PAD"
# Pad lengths are drawn from [0, ENV_PAD_LIMIT): every stack alignment within a 4 KiB page.
ENV_PAD_LIMIT = 4096
# Exit statuses bubblewrap reports for a child killed by signal N are 128 + N (measured: SIGKILL
# gives 137, SIGSEGV 139); without bubblewrap the kernel's negative code arrives instead.
_SIGNAL_EXITS = range(129, 128 + 65)


class RepetitionCheck(Protocol):
    """What the timed lane asks of the behaviour gate for every run.

    `prepare` runs before a run (it removes the workload's output files, so a stale file from
    the previous run can never match); `differences` runs after it and names, in words, every
    way the run differs from the reference. An empty answer means the run matches.
    """

    def prepare(self, invocation: Invocation) -> None: ...

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class TimeoutRule:
    """Per-command timeouts: the warm-ups get `warmup_s`, the pairs a multiple of the baseline."""

    floor_s: float
    multiple: float
    # The limit for a warm-up run, before any wall time of this baseline is known (usually the
    # workload's own `timeout_s`).
    warmup_s: float

    @classmethod
    def from_manifest(cls, policy: Policy, workload: Workload) -> TimeoutRule:
        return cls(
            floor_s=policy.timeout_floor_s,
            multiple=policy.timeout_multiple,
            warmup_s=workload.timeout_s,
        )

    def for_pairs(self, baseline_warmup_walls: Sequence[float]) -> float:
        if not baseline_warmup_walls:
            return max(self.floor_s, self.warmup_s)
        return pair_timeout(
            max(baseline_warmup_walls), multiple=self.multiple, floor_s=self.floor_s
        )


def pair_timeout(baseline_wall_s: float, *, multiple: float, floor_s: float) -> float:
    """max(floor, multiple × the baseline warm-up's wall): the manifest's policy block."""
    return max(floor_s, multiple * baseline_wall_s)


@dataclass(frozen=True)
class Sample:
    """One timed run. `pair_index` is -1 for a warm-up; `position` is 0 or 1 within its pair."""

    side: Side
    pair_index: int
    position: int
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    exit_code: int
    # Digests of the raw streams (before normalisation), as the ledger keeps them.
    stdout_sha256: str
    stderr_sha256: str
    series: int = 0
    warmup: bool = False
    # The length of the random environment pad this run had.
    env_pad: int = 0
    # Reported metrics this run printed, by name (the reported lane only).
    reported: tuple[tuple[str, float], ...] = field(default=())

    def value(self, metric: Metric) -> float:
        if metric == "wall":
            return self.wall_s
        if metric == "cpu":
            return self.cpu_s
        if metric == "memory":
            return float(self.max_rss_kib)
        values = dict(self.reported)
        if metric not in values:
            raise KeyError(f"run has no reported metric {metric!r}")
        return values[metric]


@dataclass(frozen=True)
class Mismatch:
    """A run whose behaviour differs from the reference; on the baseline side it means the
    baseline is not as deterministic as the gate's two runs suggested (an infrastructure
    problem), on the candidate side that the candidate's behaviour changed."""

    side: Side
    pair_index: int
    position: int
    differences: tuple[str, ...]
    series: int = 0

    def describe(self) -> str:
        where = "warm-up" if self.pair_index < 0 else f"pair {self.pair_index}"
        return f"{self.side} run ({where}, series {self.series}): " + "; ".join(self.differences)


@dataclass(frozen=True)
class RunFailure:
    """The named error that stopped a series: a run timed out or crashed."""

    kind: FailureKind
    side: Side
    pair_index: int
    exit_code: int
    message: str
    series: int = 0


@dataclass(frozen=True)
class LoadWindow:
    before: LoadSnapshot
    after: LoadSnapshot


def private_network(sandbox: Sandbox, program: Program) -> bool:
    """True when each run of `program` gets a network namespace of its own to tear down."""
    return sandbox.name != "none" and not program.network


@dataclass(frozen=True)
class PairSeries:
    """Samples of one workload in run order, and everything that went wrong while taking them."""

    workload: str
    samples: tuple[Sample, ...]
    warmups: tuple[Sample, ...]
    mismatches: tuple[Mismatch, ...]
    failures: tuple[RunFailure, ...]
    loads: tuple[LoadWindow, ...]
    timeouts_s: tuple[float, ...]

    @property
    def series_count(self) -> int:
        return len(self.loads)

    @property
    def cpu_per_wall(self) -> float:
        """Median CPU seconds per wall second over the runs: above 1, the target's own threads
        keep more than one task runnable (the contention rule allows for that)."""
        ratios = [s.cpu_s / s.wall_s for s in self.samples if s.wall_s > 0]
        return statistics.median(ratios) if ratios else 0.0

    @property
    def measurement_error(self) -> RunFailure | None:
        return self.failures[0] if self.failures else None

    @property
    def clean(self) -> bool:
        """True when every run finished and matched the reference."""
        return not self.failures and not self.mismatches

    @property
    def baseline_fault(self) -> str | None:
        """What a baseline run of this series did wrong, in words; None when it did nothing.

        The baseline passed the behaviour gate, so a later baseline run that crashes, times
        out, drops its metrics or differs from its own reference says the baseline or the
        machine is less reliable than the gate's runs showed. None of that is the candidate's.
        """
        for failure in self.failures:
            if failure.side == "baseline":
                return failure.message
        for mismatch in self.mismatches:
            if mismatch.side == "baseline":
                where = "warm-up" if mismatch.pair_index < 0 else f"pair {mismatch.pair_index}"
                return (
                    f"a baseline run ({where}, series {mismatch.series}) differed from its "
                    "behaviour-gate reference: " + "; ".join(mismatch.differences)
                )
        return None

    def complete_pairs(self) -> list[tuple[Sample, Sample]]:
        """(baseline, candidate) for every good pair, in run order.

        A pair is good when both sides ran and neither run timed out, crashed or mismatched. The
        other samples stay in `samples` for the ledger, but a timed-out run's wall is the
        timeout, not a measurement, and a series stopped mid-pair leaves an orphan; both would
        bias a comparison, and leaving them out keeps the two sides the same length.
        """
        bad = {(m.series, m.pair_index) for m in self.mismatches}
        bad |= {(f.series, f.pair_index) for f in self.failures}
        found: dict[tuple[int, int], dict[Side, Sample]] = {}
        for sample in self.samples:
            found.setdefault((sample.series, sample.pair_index), {})[sample.side] = sample
        return [
            (sides["baseline"], sides["candidate"])
            for key, sides in found.items()
            if key not in bad and len(sides) == 2
        ]

    @property
    def pairs(self) -> int:
        return len(self.complete_pairs())

    def values(self, side: Side, metric: Metric) -> list[float]:
        index = 0 if side == "baseline" else 1
        return [pair[index].value(metric) for pair in self.complete_pairs()]

    def extend(self, other: PairSeries) -> PairSeries:
        """This series followed by a confirmation series of the same workload."""
        if other.workload != self.workload:
            raise ValueError(f"cannot extend {self.workload!r} with {other.workload!r}")
        shift = self.series_count
        return PairSeries(
            workload=self.workload,
            samples=self.samples
            + tuple(replace(s, series=s.series + shift) for s in other.samples),
            warmups=self.warmups
            + tuple(replace(s, series=s.series + shift) for s in other.warmups),
            mismatches=self.mismatches
            + tuple(replace(m, series=m.series + shift) for m in other.mismatches),
            failures=self.failures
            + tuple(replace(f, series=f.series + shift) for f in other.failures),
            loads=self.loads + other.loads,
            timeouts_s=self.timeouts_s + other.timeouts_s,
        )


def measurement_fault(workload: str, fault: str) -> InfrastructureError:
    """The error a baseline's fault while measured becomes: a judgement without a verdict.

    Never a rejection, so a campaign does not count it among the candidate's failures (the
    judgement ends unfinished and a resumed campaign judges the candidate again).
    """
    return InfrastructureError(
        f"infrastructure fault on workload {workload!r}, not the candidate's: {fault}. The "
        "baseline passed the behaviour gate, so the baseline or the machine is less reliable "
        "than its gate runs showed; no verdict was given. Make the baseline repeat itself (a "
        "[behaviour] normalise rule for output that varies) or quieten the machine, then judge "
        "again."
    )


def run_invocation(
    invocation: Invocation,
    *,
    sandbox: Sandbox,
    timeout_s: float,
    env_pad: int = 0,
    cpus: frozenset[int] | None = None,
) -> ProcessResult:
    """One workload run of one side, in its target folder, with its own sandbox spec.

    With `env_pad` > 0 the environment gains ENV_PAD_VARIABLE of that many bytes; with `cpus`
    the run is pinned to those CPUs.
    """
    spec = invocation.spec()
    env = None if env_pad <= 0 else {**spec.env, ENV_PAD_VARIABLE: "x" * env_pad}
    return run_process(
        invocation.argv,
        cwd=invocation.cwd,
        sandbox=sandbox,
        spec=spec,
        timeout_s=timeout_s,
        stdin=invocation.stdin,
        env=env,
        cpus=cpus,
    )


def _crashed(result: ProcessResult, expected_exit: int) -> bool:
    if result.exit_code == expected_exit:
        return False
    return result.exit_code < 0 or result.exit_code in _SIGNAL_EXITS


def _failure(result: ProcessResult, invocation: Invocation, timeout_s: float) -> str:
    what = f"{invocation.program.side} run of workload {invocation.workload.id!r}"
    if result.timed_out:
        return f"{what} timed out after {timeout_s:.3g} s"
    tail = result.tail(300).strip()
    return f"{what} crashed with exit status {result.exit_code}" + (f": {tail}" if tail else "")


@dataclass
class _Recorder:
    """Runs one side at a time and files each run as a sample, a mismatch or a failure."""

    sandbox: Sandbox
    check: RepetitionCheck
    on_sample: Callable[[Sample], None] | None
    samples: list[Sample]
    warmups: list[Sample]
    mismatches: list[Mismatch]
    failures: list[RunFailure]
    rng: random.Random
    metrics: tuple[str, ...] = ()
    cpus: frozenset[int] | None = None

    def run(self, invocation: Invocation, pair_index: int, position: int, timeout_s: float) -> bool:
        """Run once and record it; False when the series must stop."""
        self.check.prepare(invocation)
        place_afresh(invocation.program.fresh_per_run)
        pad = self.rng.randrange(ENV_PAD_LIMIT)
        # A benchmark that writes its results gets a fresh scratch folder for this run alone.
        with results_folder(invocation.workload, bool(self.metrics)) as scratch:
            invocation = replace(invocation, scratch=scratch)
            result = run_invocation(
                invocation, sandbox=self.sandbox, timeout_s=timeout_s, env_pad=pad, cpus=self.cpus
            )
            reported, metrics_error = self._reported(invocation, result)
        side = invocation.program.side
        sample = Sample(
            side=side,
            pair_index=pair_index,
            position=position,
            wall_s=result.wall_s,
            cpu_s=result.cpu_s,
            max_rss_kib=result.max_rss_kib,
            exit_code=result.exit_code,
            stdout_sha256=result.stdout_sha256,
            stderr_sha256=result.stderr_sha256,
            warmup=pair_index < 0,
            env_pad=pad,
            reported=reported,
        )
        (self.warmups if sample.warmup else self.samples).append(sample)
        if self.on_sample is not None:
            self.on_sample(sample)
        if result.timed_out or _crashed(result, invocation.workload.expected_exit):
            kind: FailureKind = "timeout" if result.timed_out else "crash"
            message = _failure(result, invocation, timeout_s)
            self.failures.append(RunFailure(kind, side, pair_index, result.exit_code, message))
            return False
        if metrics_error:
            message = f"{side} run of workload {invocation.workload.id!r}: {metrics_error}"
            failure = RunFailure("metrics", side, pair_index, result.exit_code, message)
            self.failures.append(failure)
            return False
        differences = self.check.differences(invocation, result)
        if differences:
            self.mismatches.append(Mismatch(side, pair_index, position, differences))
            return False
        return True

    def _reported(
        self, invocation: Invocation, result: ProcessResult
    ) -> tuple[tuple[tuple[str, float], ...], str]:
        """The run's reported metrics, or why they are missing (empty when none are asked)."""
        if not self.metrics:
            return (), ""
        try:
            values = read_metrics(invocation.workload, result, invocation.scratch, self.metrics)
        except MetricsError as exc:
            return (), str(exc)
        return tuple(values.items()), ""


Run = tuple[Invocation, int, int]


def _pair_order(
    baseline: Invocation, candidate: Invocation, pairs: int, start: int = 0
) -> Iterator[Run]:
    """(invocation, pair index, position) in ABBA order: B C, C B, B C, … from pair `start`."""
    for index in range(start, start + pairs):
        first, second = (baseline, candidate) if index % 2 == 0 else (candidate, baseline)
        yield first, index, 0
        yield second, index, 1


def _run_all(recorder: _Recorder, runs: Iterable[Run], timeout_s: float) -> bool:
    for invocation, index, position in runs:
        if not recorder.run(invocation, index, position, timeout_s):
            return False
    return True


@dataclass(frozen=True)
class Round:
    """Where a series sits in a sequential schedule (the defaults: a series on its own)."""

    first_pair: int = 0
    warmup: int = 1
    # The per-run timeout an earlier round derived from its baseline warm-ups.
    limit_s: float | None = None
    seed: int | None = None
    # The CPUs every run is pinned to (`speedproof.judge.measure.pinning`); None leaves them free.
    cpus: frozenset[int] | None = None


def measure_pairs(
    baseline: Invocation,
    candidate: Invocation,
    *,
    pairs: int,
    sandbox: Sandbox,
    check: RepetitionCheck,
    timeout: TimeoutRule,
    warmup: int = 1,
    on_sample: Callable[[Sample], None] | None = None,
    round_: Round | None = None,
    metrics: Sequence[str] = (),
    pressure: Path = PRESSURE_CPU,
) -> PairSeries:
    """Warm up each side, then measure `pairs` ABBA pairs; stops at the first timeout, crash or
    mismatch, which the returned series names. `pressure` is the kernel's CPU pressure file
    read at both ends (`environment.load_snapshot`)."""
    where = round_ or Round(warmup=warmup)
    if baseline.workload.id != candidate.workload.id:
        raise ValueError("baseline and candidate must run the same workload")
    if pairs < 1 or where.warmup < 0:
        raise ValueError(f"need pairs >= 1 and warmup >= 0, got {pairs} and {where.warmup}")
    before = load_snapshot(pressure)
    recorder = _Recorder(
        sandbox,
        check,
        on_sample,
        [],
        [],
        [],
        [],
        random.Random(where.seed),
        tuple(metrics),
        where.cpus,
    )
    with judge_elsewhere(where.cpus):
        warm = [(baseline, -1, 0), (candidate, -1, 1)] * where.warmup
        warmed = _run_all(recorder, warm, timeout.warmup_s)
        limit = where.limit_s
        if limit is None:
            limit = timeout.for_pairs([s.wall_s for s in recorder.warmups if s.side == "baseline"])
        if warmed:
            _run_all(recorder, _pair_order(baseline, candidate, pairs, where.first_pair), limit)
    return PairSeries(
        workload=baseline.workload.id,
        samples=tuple(recorder.samples),
        warmups=tuple(recorder.warmups),
        mismatches=tuple(recorder.mismatches),
        failures=tuple(recorder.failures),
        loads=(LoadWindow(before=before, after=load_snapshot(pressure)),),
        timeouts_s=(limit,),
    )
