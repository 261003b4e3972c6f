"""The smallest win a schedule resolves at a measured noise, and the pairs a given win needs.

`speedproof calibrate` measures the false accepts and rejects of the judge's rule and its power
on one known win. What a user also needs before trusting an `inconclusive` is the size below
which wins on this machine mostly end that way. The no-change trials (a/a and null) measure the
noise that decides it: the winsorized standard deviation s_w of the per-pair log ratios, the
figure the trimmed t's standard error is built from (`paired.trimmed_standard_error`).

At the schedule's last look all `max_pairs` pairs are tested at the level the spending left for
it (alpha_K; 0.01 for the default five looks at 0.05). A true change of d on the log scale makes
the trimmed t a non-central t with h − 1 degrees of freedom (h the pairs kept) and
non-centrality d / se; the change resolved with probability `power` is the d at which that t
exceeds t_{1 − alpha_K / 2, h − 1} with probability `power`, reported as the improvement
1 − e^(−d) of a lower-is-better metric. With k representative workloads and the win on only
one of them, Holm tests that one at alpha_K / k; the figures use that level, so a win that
shows on every workload is resolved somewhat sooner.

An estimate, and said to be one: it leaves out the earlier looks (which add power), the
signed-rank test that must agree and the two-look confirmation of small accepts (which take
some), and it treats the machine's noise as one figure where streams differ. On the 190-trial
records of ADR 0027 (their median s_w: 8.5 % pinned, 11.1 % unpinned; resolved wins 5.9 % and
7.6 %) it predicted the acceptance of each injected win within 12 points: 100 % of the 9.5 and
11.2 % wins (30 of 30 measured), 78 % and 73 % of the 5.1 and 6.3 % wins (67 % and 63 %), 39 %
and 22 % of the 3.6 % wins (27 % and 33 %); docs/adr/0029.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from speedproof.stats.paired import kept_pairs, trimmed_standard_error
from speedproof.stats.sequential import Schedule

# scipy and numpy are imported inside the functions that compute (about 1 s of start-up on
# a 2-core machine, benchmarks/cli_startup.py): `--help` and a guard reject compute nothing.

# The share of true wins of the reported size that the last look accepts: nine in ten.
POWER = 0.9
# Beyond this many pairs a schedule is not worth suggesting: at 35 ms a run it is already
# 70 s of timing per workload and round, and a win that needs it belongs to the instruction lane.
MAX_SUGGESTED_PAIRS = 1000


@dataclass(frozen=True)
class _LastLook:
    """The last look's trimmed t: its degrees of freedom, critical value and standard error."""

    df: int
    critical: float
    se: float


def _last_look(winsorized_sd: float, schedule: Schedule, workloads: int) -> _LastLook:
    from scipy import stats as sps

    n = schedule.max_pairs
    df = kept_pairs(n) - 1
    level = schedule.alpha_at(schedule.looks()) / workloads
    critical = float(sps.t.ppf(1.0 - level / 2.0, df))
    return _LastLook(df, critical, trimmed_standard_error(winsorized_sd, n))


def acceptance_probability(
    win_pct: float, winsorized_sd: float, schedule: Schedule, *, workloads: int = 1
) -> float:
    """About how often the last look of `schedule` finds a true `win_pct` % improvement."""
    _check(winsorized_sd, workloads, POWER)
    if not 0.0 < win_pct < 100.0:
        raise ValueError(f"a win must lie in (0, 100) %, got {win_pct!r}")
    look = _last_look(winsorized_sd, schedule, workloads)
    d = -math.log1p(-win_pct / 100.0)
    if look.se == 0.0:
        return 1.0
    from scipy import stats as sps

    return float(sps.nct.sf(look.critical, look.df, d / look.se))


def resolvable_win_pct(
    winsorized_sd: float, schedule: Schedule, *, workloads: int = 1, power: float = POWER
) -> float:
    """The improvement, in %, that the last look of `schedule` accepts with probability `power`.

    `winsorized_sd` is the per-pair log ratios' winsorized standard deviation (a fraction, not
    %); `workloads` the representative workloads Holm divides the level among.
    """
    _check(winsorized_sd, workloads, power)
    look = _last_look(winsorized_sd, schedule, workloads)
    from scipy import optimize
    from scipy import stats as sps

    # The non-centrality at which the trimmed t clears its critical value with probability
    # `power`; the normal shortcut critical + z_power is 0.1-0.2 short at 40 kept pairs, which
    # simulated streams found significant 86 % of the time instead of 90 %.
    shift = optimize.brentq(
        lambda nc: float(sps.nct.sf(look.critical, look.df, nc)) - power, 0.0, 100.0
    )
    return -math.expm1(-float(shift) * look.se) * 100.0


def pairs_to_resolve(
    win_pct: float,
    winsorized_sd: float,
    schedule: Schedule,
    *,
    workloads: int = 1,
    power: float = POWER,
) -> int | None:
    """The smallest `max_pairs`, in whole rounds of `schedule`, whose last look accepts a
    `win_pct` % improvement with probability `power`; None beyond MAX_SUGGESTED_PAIRS. A win of
    100 % or more is resolved by the first round (every resolvable win is below 100 %)."""
    if not win_pct > 0.0:
        raise ValueError(f"a win must be above 0 %, got {win_pct!r}")
    for max_pairs in range(schedule.round_pairs, MAX_SUGGESTED_PAIRS + 1, schedule.round_pairs):
        longer = replace(schedule, max_pairs=max_pairs)
        if resolvable_win_pct(winsorized_sd, longer, workloads=workloads, power=power) <= win_pct:
            return max_pairs
    return None


def _check(winsorized_sd: float, workloads: int, power: float) -> None:
    if not (math.isfinite(winsorized_sd) and winsorized_sd >= 0.0):
        raise ValueError(f"a standard deviation must be finite and >= 0, got {winsorized_sd!r}")
    if workloads < 1:
        raise ValueError(f"at least one representative workload, got {workloads}")
    if not 0.5 <= power < 1.0:
        raise ValueError(f"power must lie in [0.5, 1), got {power!r}")
