"""A benchmark's reported figures against the wall time its run was measured to take.

The figures a benchmark prints or writes come from the harness running in the same process as
the candidate's code, which can print a line of its own, rewrite the harness's output on its way
out (Go: swap os.Stdout at init; Python: patch the harness or the JSON encoder) or write the
results file itself. The judge's own measurement of the run (its wall time, from the launcher's
fork to its wait4) is the one figure the candidate cannot touch, and every format says how much
timed work the run did: Go's iterations × ns/op, pytest-benchmark's rounds × iterations × mean,
pyperf's loops × value summed over every value. That total must fit inside the run:

- it may not exceed the wall time (1 % and 1 ms of slack: Go prints ns/op to 4-5 significant
  digits, so iterations × printed ns/op can overshoot the true total by 0.05 %);
- it may not fall below the least an honest run of the harness does: Go's duration -benchtime
  runs its last round until the round's timed total reaches the benchtime (testing.B's launch
  loop), so an honest total is never below it (90 % allows for nothing but print rounding; a
  forged ns/op of half the true one with the true iteration count reads 50 %); a count
  -benchtime runs exactly that many iterations; the Python harnesses promise no least total (a
  cold first call makes pytest-benchmark's calibration choose too few rounds: an honest run
  here timed 33 rounds of 135 µs, 4.5 ms, in a run of 1.19 s, 0.5 %, with
  --benchmark-max-time=0.1), so there the floor is 0.1 % of the run's wall time: a report
  whose every time is a thousandth of the truth falls below it, a tenth does not.

A consistent forgery (ns/op halved and the iteration count doubled to match) passes: this check
catches figures no run of this length can produce, not every lie; see the README's limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from speedproof.ground.errors import SpeedproofError

# Slack above the wall time: print rounding (0.05 %) and the 1 ms granularity of nothing.
_OVER_SHARE = 1.01
_OVER_S = 0.001
# Share of a Go duration benchtime an honest last round always reaches (see the docstring).
GO_FLOOR_SHARE = 0.9
# Share of the run's wall time a Python benchmark's timed calls must account for.
PYTHON_WALL_SHARE = 0.001


class InconsistentRun(SpeedproofError):
    """A run whose reported figures cannot come from a run of the length it was measured at."""


@dataclass(frozen=True)
class BenchReading:
    """What one run of a benchmark reported, read from its own output."""

    metrics: dict[str, float]
    # Seconds of timed iterations the output accounts for.
    timed_s: float
    # The least `timed_s` an honest run shows, in seconds, and as a share of the run's wall time
    # (whichever is larger applies); 0 for none.
    floor_s: float = 0.0
    floor_wall_share: float = 0.0
    # The figures in words, for the reason a failed run is given: "426 iterations × 728385 ns/op".
    what: str = ""
    why_floor: str = ""


def check_consistent(reading: BenchReading, wall_s: float) -> None:
    """InconsistentRun, naming the figures, when `reading` cannot come from a run of `wall_s`."""
    timed = reading.timed_s
    if timed > wall_s * _OVER_SHARE + _OVER_S:
        raise InconsistentRun(
            f"the benchmark reports {timed:.4g} s of timed iterations ({reading.what}) but the "
            f"whole run took {wall_s:.4g} s: figures no run of this length produces (forged?)"
        )
    floor = max(reading.floor_s, reading.floor_wall_share * wall_s)
    if timed < floor:
        raise InconsistentRun(
            f"the benchmark reports only {timed:.4g} s of timed iterations ({reading.what}) in a "
            f"run of {wall_s:.4g} s, below the {floor:.4g} s {reading.why_floor}: figures its "
            "harness does not produce (forged?)"
        )
