"""Whether a workload is long enough to measure, and what its noise lets the judge find.

The spread is the robust standard deviation (MAD × 1.4826) of the first run's per-pair log
ratios: the noise the judge's statistics see, without the one slow run a shared machine throws
in. There is no length threshold in the judge to borrow, so two figures the project already
trusts decide:

- **start-up**: a run of the sandbox with nothing in it (`true`; for Python the interpreter with
  `-c pass`) costs the same on both sides of every pair and dilutes every change: a true 5 % win
  of a 10 ms program read 3.2 % behind 5.7 ms of start-up (docs/adr/0003). A workload is too
  short when start-up is at least 1 / `CONFIRM_MULTIPLE` (half) of its wall time: a win of twice
  the accept floor in its own code, the size calibrate's noise table asks about, then reads under
  the floor itself.
- **noise**, said beside it: from the spread, `stats.power.resolvable_win_pct` (docs/adr/0029,
  calibrate's estimate) gives the win the schedule's last look finds nine times in ten; above
  twice the floor, most wins of that size will end inconclusive, and the message says what
  resolves smaller ones. The noise is the machine's as much as the workload's (ADR 0029: one
  pinned command read a robust spread of 3.4-4.9 %, and 17.8 % hours later), so it decides nothing;
  four or five pairs make it a first look, not a measurement: `speedproof calibrate` measures it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Literal

from speedproof.judge.policy.decide import CONFIRM_MULTIPLE

Status = Literal["long enough", "too short", "failed", "not timed"]
# The median absolute deviation of normal data times this is its standard deviation.
MAD_TO_SD = 1.4826


def robust_sd(values: Sequence[float]) -> float:
    """MAD × 1.4826: the standard deviation for normal data, robust to the one slow run (another
    job's burst) a shared machine throws into five pairs, which the judge's trimmed statistics
    would set aside too."""
    centre = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - centre) for v in values)


def classify(
    median_s: float,
    startup_s: float,
    resolvable: float | None,
    floor_pct: float,
    pairs: tuple[int, int],
) -> tuple[Status, str]:
    """Whether a workload of `median_s` is long enough beside `startup_s` of start-up, and what
    its noise lets the judge find: `resolvable`, a win in %, estimated from `pairs[0]` pairs for
    a last look at `pairs[1]`."""
    measured, last = pairs
    win = CONFIRM_MULTIPLE * floor_pct
    share = min(1.0, startup_s / median_s) if median_s > 0 else 1.0
    if share >= 1.0 / CONFIRM_MULTIPLE:
        return "too short", (
            f"{startup_s * 1000:.0f} ms of its {median_s * 1000:.0f} ms is start-up, the same "
            f"on both sides: a {win:g}% win in the program's own code would read under the "
            f"{floor_pct:g}% accept floor; give it a larger input"
        )
    said = f"start-up is {share * 100:.0f}% of it"
    if resolvable is None:
        return "long enough", f"{said}; one pair only, so no estimate of its noise"
    noise = (
        f"at this spread the judge's last look ({last} pairs) finds a win of {resolvable:.1f}% "
        f"nine times in ten (a first look from {measured} pairs: `speedproof calibrate` "
        "measures the noise)"
    )
    if resolvable > win:
        noise += (
            f"; wins under that, {win:g}% among them, mostly end inconclusive: [policy] "
            "timed_cpus = 1 or more pairs (max_measure_s, max_pairs) resolve smaller ones"
        )
    return "long enough", f"{said}; {noise}"


# Below this many pairs a spread is written as a guess. The robust SD of n normal log ratios is
# off by about 1.16 / sqrt(n) of itself (MAD's 37 % efficiency): ±52 % at 5 pairs, ±26 % at 20.
# A shared machine moves it more than that: five pairs read 0.4 % on sqlparse where the judge,
# minutes later, measured 7.6 % a pair; so the judge measures its own noise on every judgement.
GUESS_BELOW_PAIRS = 20


def spread_words(spread_pct: float, pairs: int) -> str:
    """`7.6% (5 pairs, a guess)`: the figure with its count, and what it is worth."""
    guess = ", a guess" if pairs < GUESS_BELOW_PAIRS else ""
    return f"{spread_pct:.1f}% ({pairs} pairs{guess})"
