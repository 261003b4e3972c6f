"""Pairs from a record: recorded or simulated streams replayed through the one sequential rule.

A benchmark that scores the decision rule on recorded streams, a simulation on synthetic ones,
and the tests of the rule itself all hand their pairs to `SequentialRule` through
`RecordedPairs`, so what they score is what the judge applies. A stream holds one value per pair
and side for each timed metric (wall and CPU seconds, peak memory in KiB); pair i is replayed in
ABBA order (even: baseline first), as the runner measured it. A replayed round is never
contended: a recording keeps only the rounds the judge kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from speedproof.ground.program import Side
from speedproof.judge.measure.environment import LoadSnapshot
from speedproof.judge.measure.readings import TIMED_METRICS
from speedproof.judge.measure.runner import LoadWindow, PairSeries, Sample
from speedproof.manifest import Workload

SIDES: tuple[Side, ...] = ("baseline", "candidate")
# A recorded side: metric name -> one value per pair, in pair order.
Columns = Mapping[str, Sequence[float]]
_QUIET = LoadSnapshot(0.0, 0.0, 0.0, 0.0)


class StreamError(ValueError):
    """A recorded stream that cannot be read as the rule needs it."""


@dataclass(frozen=True)
class RecordedWorkload:
    """The pairs of one workload in one trial, column by column."""

    workload: str
    baseline: Columns
    candidate: Columns

    def __post_init__(self) -> None:
        lengths = {len(side[m]) for side in (self.baseline, self.candidate) for m in TIMED_METRICS}
        if len(lengths) != 1:
            raise StreamError(
                f"workload {self.workload!r}: every metric of both sides needs one value per "
                f"pair, got lengths {sorted(lengths)}"
            )

    @classmethod
    def of_wall(
        cls, workload: str, baseline: Sequence[float], candidate: Sequence[float]
    ) -> RecordedWorkload:
        """Wall times alone (a simulation's): CPU equal to wall, memory the same on both sides,
        so the guardrails read no change and only the primary metric decides."""
        return cls(
            workload,
            {"wall": baseline, "cpu": baseline, "memory": [1024.0] * len(baseline)},
            {"wall": candidate, "cpu": candidate, "memory": [1024.0] * len(candidate)},
        )

    @property
    def pairs(self) -> int:
        return len(self.baseline["wall"])

    def prefix(self, pairs: int) -> RecordedWorkload:
        """The first `pairs` pairs, as if the measurement had stopped there."""
        if not 1 <= pairs <= self.pairs:
            raise StreamError(
                f"workload {self.workload!r} has {self.pairs} pairs; cannot take {pairs}"
            )
        return RecordedWorkload(
            self.workload,
            {m: tuple(self.baseline[m][:pairs]) for m in TIMED_METRICS},
            {m: tuple(self.candidate[m][:pairs]) for m in TIMED_METRICS},
        )

    def side(self, side: Side) -> Columns:
        return self.baseline if side == "baseline" else self.candidate

    def series(self, first: int = 0, pairs: int | None = None) -> PairSeries:
        """Pairs `first` .. `first + pairs - 1` (all from `first` when None) as the runner's
        `PairSeries`, in ABBA order by each pair's place in the whole stream."""
        last = self.pairs if pairs is None else first + pairs
        if not 0 <= first < last <= self.pairs:
            raise StreamError(
                f"workload {self.workload!r} has {self.pairs} pairs; cannot take pairs "
                f"{first} to {last - 1}"
            )
        samples: list[Sample] = []
        for index in range(first, last):
            order = SIDES if index % 2 == 0 else SIDES[::-1]
            samples += [self._sample(side, index, position) for position, side in enumerate(order)]
        return PairSeries(
            workload=self.workload,
            samples=tuple(samples),
            warmups=(),
            mismatches=(),
            failures=(),
            loads=(LoadWindow(_QUIET, _QUIET),),
            timeouts_s=(math.inf,),
        )

    def _sample(self, side: Side, index: int, position: int) -> Sample:
        values = self.side(side)
        return Sample(
            side=side,
            pair_index=index,
            position=position,
            wall_s=float(values["wall"][index]),
            cpu_s=float(values["cpu"][index]),
            max_rss_kib=round(values["memory"][index]),
            exit_code=0,
            stdout_sha256="",
            stderr_sha256="",
        )


@dataclass(frozen=True)
class RecordedPairs:
    """A `PairSource` (`measure.sequential_rule`) that replays recorded streams in order."""

    streams: Mapping[str, RecordedWorkload]

    def take(self, workload: Workload, pairs: int, first_pair: int, look: int) -> PairSeries:
        stream = self.streams.get(workload.id)
        if stream is None:
            raise StreamError(f"no recorded stream for workload {workload.id!r}")
        return stream.series(first_pair, pairs)

    def contended(self, series: PairSeries) -> bool:
        return False

    def note(self, series: PairSeries) -> str | None:
        return None
