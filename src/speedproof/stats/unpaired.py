"""Baseline against candidate as two independent samples: Welch's t and Mann-Whitney U.

One reading is one workload and one metric. `compare` turns the two sample lists into a
`Comparison`: the relative change of the means, a Welch t test, a Mann-Whitney U test and a 95 %
interval on the relative change. See docs/adr/0002-statistics-and-policy.md for why the rule is
what it is, with numbers.

The timed lane measures in interleaved pairs, and `speedproof.stats.paired` analyses them as
pairs (ADR 0020); this module ignores the pairing on purpose. It is the rule every verdict used
before ADR 0020, it still judges samples that are not pairs, and its Welch t and Mann-Whitney p
are kept beside the paired figures so a reader can see what the pairing bought.

Confirmation series: when the policy asks for one (`policy.needs_confirmation`), the caller
measures a second series of the same size, concatenates each side's samples with the first
series' (baseline with baseline, candidate with candidate) and calls `compare` again. Pooling is
plain concatenation on purpose: both series come from the same pair protocol, so they estimate
the same two means, and a separate pooling function would only hide that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from scipy import stats as sps

from speedproof.evidence import Comparison

# Fewer samples than this and no test is run: with 3 a side the smallest two-sided exact
# Mann-Whitney p is 0.1, so the test could never say "significant" anyway.
MIN_SAMPLES = 4
# Mann-Whitney two-sided level.
ALPHA = 0.05
# |Welch t| above this is significant too. At the default 25 pairs (df ≈ 48) it is a two-sided
# level of about 0.033, a little stricter than ALPHA, because the t test is the one that is
# fooled by a heavy tail; the two together keep the A/A rate near 6 % (ADR 0002).
T_CUTOFF = 2.2
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Moments:
    n: int
    mean: float
    var: float


@dataclass(frozen=True)
class _Tests:
    welch_t: float
    p_welch: float
    p_mannwhitney: float
    df: float


def compare(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    workload: str,
    metric: str,
    tier: str,
    limit_pct: float,
    lower_is_better: bool = True,
    lane: str = "timed",
) -> Comparison:
    """Compare one metric on one workload.

    `significant` is p(Mann-Whitney) < 0.05 or |Welch t| > 2.2. `supported` is significant, or
    the interval rules out a worsening beyond `limit_pct` (for lower-is-better, the interval's
    upper end is below `limit_pct`; otherwise its lower end is above `-limit_pct`). The t sign
    follows the delta: positive when the candidate's mean is the larger. A NaN or infinite
    sample is a `ValueError` naming the metric and the workload.
    """
    where = f"metric {metric!r} on workload {workload!r}"
    base_values = _samples(baseline, "baseline", where)
    cand_values = _samples(candidate, "candidate", where)
    base, cand = moments(base_values), moments(cand_values)
    untested = Comparison(
        workload=workload,
        metric=metric,
        tier=tier,
        n_baseline=base.n,
        n_candidate=cand.n,
        baseline_mean=base.mean,
        candidate_mean=cand.mean,
        delta_pct=_relative(cand.mean - base.mean, base.mean),
        ci_low_pct=math.nan,
        ci_high_pct=math.nan,
        p_value=None,
        welch_t=None,
        p_welch=None,
        p_mannwhitney=None,
        significant=False,
        supported=False,
        lower_is_better=lower_is_better,
        lane=lane,
        note=(
            f"fewer than {MIN_SAMPLES} samples a side (baseline {base.n}, candidate {cand.n}), "
            "so no test was run"
        ),
    )
    if min(base.n, cand.n) < MIN_SAMPLES:
        return untested
    tests = _tests(base_values, cand_values, base, cand)
    low, high = _interval(base, cand, tests.df)
    significant = tests.p_mannwhitney < ALPHA or abs(tests.welch_t) > T_CUTOFF
    rules_out = high < limit_pct if lower_is_better else low > -limit_pct
    finite = all(math.isfinite(x) for x in (untested.delta_pct, low, high))
    return replace(
        untested,
        ci_low_pct=low,
        ci_high_pct=high,
        p_value=tests.p_mannwhitney,
        welch_t=tests.welch_t,
        p_welch=tests.p_welch,
        p_mannwhitney=tests.p_mannwhitney,
        significant=significant,
        supported=finite and (significant or rules_out),
        extra=(("welch_df", tests.df),),
        note=_note(base, cand, finite),
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order.

    The k-th smallest (k from 0) of m p-values is multiplied by m - k, the running maximum keeps
    the adjusted values monotone in the order of the raw ones, and nothing exceeds 1.
    """
    for p in p_values:
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"a p-value must lie in [0, 1], got {p!r}")
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _samples(values: Sequence[float], side: str, where: str) -> list[float]:
    floats = [float(v) for v in values]
    bad = [v for v in floats if not math.isfinite(v)]
    if bad:
        raise ValueError(f"{where}: the {side} samples contain {len(bad)} non-finite value(s)")
    return floats


def moments(values: list[float]) -> Moments:
    """Count, mean and sample variance; the variance exactly 0 for a constant sample."""
    n = len(values)
    if n == 0:
        return Moments(0, math.nan, math.nan)
    mean = math.fsum(values) / n
    # Exactly 0 for a constant sample (binary size, often memory): numpy's two-pass variance
    # leaves ~1e-34 of rounding there, which would turn "no change" into a huge t.
    if n < 2 or min(values) == max(values):
        return Moments(n, mean, 0.0)
    return Moments(n, mean, math.fsum((v - mean) ** 2 for v in values) / (n - 1))


def _relative(difference: float, base_mean: float) -> float:
    """`difference` as a percentage of the baseline mean; NaN or ±inf when the mean is 0."""
    if base_mean == 0.0:
        if difference == 0.0 or math.isnan(difference):
            return math.nan
        return math.copysign(math.inf, difference)
    return difference / base_mean * 100.0


def _standard_error(base: Moments, cand: Moments) -> float:
    return math.sqrt(base.var / base.n + cand.var / cand.n)


def _tests(baseline: list[float], candidate: list[float], base: Moments, cand: Moments) -> _Tests:
    difference = cand.mean - base.mean
    if _standard_error(base, cand) == 0.0:
        # Both sides constant: scipy answers NaN. Equal constants are no evidence of a change
        # (t = 0, p = 1); different constants are a certain change (t = ±inf, p = 0).
        if difference == 0.0:
            return _Tests(0.0, 1.0, 1.0, math.nan)
        p_mwu = float(sps.mannwhitneyu(candidate, baseline, alternative="two-sided").pvalue)
        return _Tests(math.copysign(math.inf, difference), 0.0, p_mwu, math.nan)
    # From the exact moments rather than `ttest_ind` on the raw samples: the same Welch test,
    # without scipy's precision-loss warning when one side is constant.
    welch = sps.ttest_ind_from_stats(
        cand.mean,
        math.sqrt(cand.var),
        cand.n,
        base.mean,
        math.sqrt(base.var),
        base.n,
        equal_var=False,
    )
    p_mwu = float(sps.mannwhitneyu(candidate, baseline, alternative="two-sided").pvalue)
    return _Tests(float(welch.statistic), float(welch.pvalue), p_mwu, _welch_df(base, cand))


def _welch_df(base: Moments, cand: Moments) -> float:
    """Welch-Satterthwaite degrees of freedom."""
    a = base.var / base.n
    b = cand.var / cand.n
    return (a + b) ** 2 / (a * a / (base.n - 1) + b * b / (cand.n - 1))


def _interval(base: Moments, cand: Moments, df: float) -> tuple[float, float]:
    """The CONFIDENCE interval on the difference of means, as a percentage of the baseline mean.

    The baseline mean is treated as exact: at 25 pairs and a few % noise its own uncertainty
    moves the ends by a small fraction of the half-width, and a ratio interval (Fieller) would
    buy little for a metric that is never near 0.
    """
    difference = cand.mean - base.mean
    se = _standard_error(base, cand)
    if se == 0.0:
        delta = _relative(difference, base.mean)
        return delta, delta
    half = float(sps.t.ppf(0.5 + CONFIDENCE / 2.0, df)) * se
    ends = (_relative(difference - half, base.mean), _relative(difference + half, base.mean))
    if any(math.isnan(e) for e in ends):
        return math.nan, math.nan
    return min(ends), max(ends)


def _note(base: Moments, cand: Moments, finite: bool) -> str:
    if not finite:
        return (
            f"the baseline mean is {base.mean:g}, so the change cannot be expressed as a "
            "percentage and the reading supports nothing"
        )
    if base.var == 0.0 and cand.var == 0.0:
        return "both sides are constant, so the interval is a single point"
    return ""
