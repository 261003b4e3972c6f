"""The timed lane: baseline and candidate measured in interleaved, counterbalanced pairs.

One series is: the 1-minute load average; `warmup` discarded runs a side (baseline first); then
`pairs` pairs in ABBA order, pair 0 baseline-then-candidate, pair 1 candidate-then-baseline, and
so on, so that a drift in the machine (a warming cache, a throttling CPU, a neighbour starting)
lands on both sides equally; then the load average again. Every run, warm-ups included, is
checked against the behaviour gate's reference before the next one starts: a candidate whose
output changes on its 17th run is caught, recorded as a `Mismatch`, and the series stops.

The timed region is `run_process` alone: removing stale output files, fingerprinting and the
`on_sample` callback happen between runs, outside the clock. See docs/adr/0003-timed-lane.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from speedproof.manifest import Policy, Workload
from speedproof.measure.environment import LoadSnapshot, load_snapshot
from speedproof.measure.process import ProcessResult, run_process
from speedproof.program import Invocation, Side
from speedproof.sandbox import Sandbox

Metric = Literal["wall", "cpu", "memory"]
FailureKind = Literal["timeout", "crash"]
METRICS: tuple[Metric, ...] = ("wall", "cpu", "memory")
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

    def value(self, metric: Metric) -> float:
        if metric == "wall":
            return self.wall_s
        if metric == "cpu":
            return self.cpu_s
        return float(self.max_rss_kib)


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
    def measurement_error(self) -> RunFailure | None:
        return self.failures[0] if self.failures else None

    @property
    def clean(self) -> bool:
        """True when every run finished and matched the reference."""
        return not self.failures and not self.mismatches

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


def run_invocation(invocation: Invocation, *, sandbox: Sandbox, timeout_s: float) -> ProcessResult:
    """One workload run of one side, in its target folder, with its own sandbox spec."""
    return run_process(
        invocation.argv,
        cwd=invocation.program.root,
        sandbox=sandbox,
        spec=invocation.program.spec(),
        timeout_s=timeout_s,
        stdin=invocation.stdin,
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

    def run(self, invocation: Invocation, pair_index: int, position: int, timeout_s: float) -> bool:
        """Run once and record it; False when the series must stop."""
        self.check.prepare(invocation)
        result = run_invocation(invocation, sandbox=self.sandbox, timeout_s=timeout_s)
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
        )
        (self.warmups if sample.warmup else self.samples).append(sample)
        if self.on_sample is not None:
            self.on_sample(sample)
        if result.timed_out or _crashed(result, invocation.workload.expected_exit):
            kind: FailureKind = "timeout" if result.timed_out else "crash"
            message = _failure(result, invocation, timeout_s)
            self.failures.append(RunFailure(kind, side, pair_index, result.exit_code, message))
            return False
        differences = self.check.differences(invocation, result)
        if differences:
            self.mismatches.append(Mismatch(side, pair_index, position, differences))
            return False
        return True


Run = tuple[Invocation, int, int]


def _pair_order(baseline: Invocation, candidate: Invocation, pairs: int) -> Iterator[Run]:
    """(invocation, pair index, position) in ABBA order: B C, C B, B C, …"""
    for index in range(pairs):
        first, second = (baseline, candidate) if index % 2 == 0 else (candidate, baseline)
        yield first, index, 0
        yield second, index, 1


def _run_all(recorder: _Recorder, runs: Iterable[Run], timeout_s: float) -> bool:
    for invocation, index, position in runs:
        if not recorder.run(invocation, index, position, timeout_s):
            return False
    return True


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
) -> PairSeries:
    """Warm up each side, then measure `pairs` ABBA pairs; stops at the first timeout, crash or
    mismatch, which the returned series names."""
    if baseline.workload.id != candidate.workload.id:
        raise ValueError("baseline and candidate must run the same workload")
    if pairs < 1 or warmup < 0:
        raise ValueError(f"need pairs >= 1 and warmup >= 0, got {pairs} and {warmup}")
    before = load_snapshot()
    recorder = _Recorder(sandbox, check, on_sample, [], [], [], [])
    warmed = _run_all(recorder, [(baseline, -1, 0), (candidate, -1, 1)] * warmup, timeout.warmup_s)
    limit = timeout.for_pairs([s.wall_s for s in recorder.warmups if s.side == "baseline"])
    if warmed:
        _run_all(recorder, _pair_order(baseline, candidate, pairs), limit)
    return PairSeries(
        workload=baseline.workload.id,
        samples=tuple(recorder.samples),
        warmups=tuple(recorder.warmups),
        mismatches=tuple(recorder.mismatches),
        failures=tuple(recorder.failures),
        loads=(LoadWindow(before=before, after=load_snapshot()),),
        timeouts_s=(limit,),
    )
