"""Baseline against candidate as pairs: per-pair log ratios, a trimmed t and a signed-rank test.

The timed lane measures in ABBA pairs (ADR 0003): the two runs of a pair are a fraction of a
second apart, so whatever the machine is doing at that moment (a warm page cache, a throttled
CPU, a neighbour's build) multiplies both. The ratio candidate / baseline of one pair cancels that
factor; the unpaired tests of `speedproof.stats.unpaired` count it as noise. On a series whose
speed drifts by ±15 % while each run has 0.5 % noise of its own, a real 2 % slowdown gives a
paired t of 15 and a Welch t of 0.6 (tests/stats/test_stats_paired.py builds that case). Over
simulated streams with a shared drift, 5 % wins are accepted 99 % of the time from pairs and 88 %
from the unpaired rule (ADR 0020).

Why logarithms: timing noise is multiplicative (a busy machine makes every run some percent
slower, not some milliseconds), so r_i = ln(cand_i / base_i) has the same spread on a 10 ms and a
10 s workload, and twice as slow and twice as fast are equally far from "no change".

Why a trimmed mean: on a shared 2-core virtual machine the r_i of 100 recorded A/A streams of a
35 ms sandboxed run have a kurtosis of 9 (a normal sample: 3) and a standard deviation of 7.9 %
against 4.6 % from their median absolute deviation: a few runs land on a neighbour's burst and
the plain mean and its t test carry them. The change is estimated by the 10 %-trimmed mean of
r (the lowest and highest 10 % of pairs set aside, one of ten), reported as
(exp(trimmed mean r) - 1) × 100, and tested with the Tukey-McLaughlin (Yuen) one-sample trimmed
t: standard error sqrt((n - 1) s_w^2 / (h (h - 1))), s_w^2 the variance of the winsorized r and
h = n - 2g the pairs kept, on h - 1 degrees of freedom. Its interval at level 1 - alpha, mapped
through exp, is the reported interval. Re-evaluated on the same recorded streams
(benchmarks/measurement_rules.py --from-file, ADR 0026), it accepted 27 of 30 injected 5 % wins
where the plain paired t accepted 25, with no false accept or reject in 100 A/A streams. The
plain paired t, the plain mean and its standard deviation stay among the figures.

Why two tests that must both agree: the trimmed t weighs magnitudes of the middle 80 %; the
Wilcoxon signed-rank test ranks all of them, so an outlier counts as one rank, but it cannot tell
19 pairs 1 % faster from 19 pairs 10 % faster. `significant` needs p < alpha from both, and
`p_value` is the larger of the two, so that significant ⟺ p_value < alpha and a Holm correction
applied to `p_value` later corrects the rule as it is. Where five pairs of twenty carry a +30 %
outlier, trimming keeps three of them and the signed-rank test votes no; where one pair of ten
is 80 % slower, it is trimmed, and the other nine decide.

Zeros and ties: a pair whose runs are exactly equal (peak memory in KiB, often) has r = 0.
`zero_method="zsplit"` keeps such pairs in the ranking and splits their rank between the two
signs, so 30 unchanged pairs and 6 slightly larger ones read as "mostly no change" (p ≈ 0.09);
dropping the zeros ("wilcox") tests the 6 alone as if the 30 had never been measured (p ≈ 0.02).
On simulated page-granular memory (25 pairs, 80 % of runs on the same page count) zsplit holds
the A/A rate at 1.7 % where "wilcox" and "pratt" read 4.4 %, and detects a small real increase
51 % of the time against their 58 %: fewer false memory rejections, for 7 points of power on a
one-page change. Without zeros or
tied magnitudes the exact null distribution is used up to 50 pairs (the sequential schedule's
maximum); with them, all 2^n sign patterns up to n = 13 (8192 permutations), and the tie- and
zero-corrected normal approximation above that (on untied samples its p is within 0.006 of the
exact one at 14 pairs and 0.0013 at 50, for p between 0.001 and 0.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from speedproof.judge.policy.evidence import Comparison
from speedproof.stats.unpaired import MIN_SAMPLES, compare, moments

# scipy and numpy are imported inside the functions that compute (about 1 s of start-up on
# a 2-core machine, benchmarks/cli_startup.py): `--help` and a guard reject compute nothing.

# Largest number of pairs for which the exact signed-rank distribution is used (no zeros, no
# tied magnitudes): it covers the sequential schedule's 50 pairs in about half a millisecond.
EXACT_WILCOXON_MAX = 50
# With zeros or ties the exact distribution does not apply; up to this many pairs every one of
# the 2^n sign patterns is enumerated instead (2^13 = 8192), above it the normal approximation.
PERMUTATION_MAX = 13
# The share of pairs set aside at each end before the mean: int(0.1 n), one pair in ten, so the
# first look of ten pairs keeps eight (ADR 0026 has the trims compared on recorded streams).
TRIM = 0.1


@dataclass(frozen=True)
class _LogRatios:
    values: tuple[float, ...]
    mean: float
    sd: float
    # The TRIM-trimmed mean, the standard deviation of the winsorized ratios, and the pairs kept.
    trimmed_mean: float
    winsorized_sd: float
    kept: int

    @property
    def n(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class _PairedTests:
    # The trimmed t, which decides with the signed-rank test, and the plain paired t, kept.
    t: float
    p_t: float
    plain_t: float
    p_plain_t: float
    p_wilcoxon: float
    # The (1 - alpha) interval on the trimmed mean of r, still on the log scale.
    low: float
    high: float


def paired_compare(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    workload: str,
    metric: str,
    tier: str,
    limit_pct: float,
    lower_is_better: bool = True,
    lane: str = "timed",
    alpha: float = 0.05,
) -> Comparison:
    """Compare one metric on one workload from pairs in run order (baseline[i] with candidate[i]).

    `delta_pct` is the 10 %-trimmed mean ratio as a percentage; the interval is the trimmed t
    interval at level 1 - alpha; `significant` is p(trimmed t) < alpha and p(Wilcoxon) < alpha;
    `p_value` is the larger of the two. `supported` is significant, or the interval rules out a
    worsening beyond `limit_pct` (as in `compare`). `welch_t`, `p_welch` and `p_mannwhitney` are the
    unpaired figures on the same samples; the paired ones are in `extra`. Unequal lengths,
    NaN or infinite samples, and an alpha outside (0, 1) are a `ValueError`; a non-positive
    value leaves no ratio, so the reading gets a NaN delta, a note, and supports nothing.
    """
    where = f"metric {metric!r} on workload {workload!r}"
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"{where}: alpha must lie in (0, 1), got {alpha!r}")
    if len(baseline) != len(candidate):
        raise ValueError(
            f"{where}: paired samples need equal lengths, got baseline {len(baseline)} and "
            f"candidate {len(candidate)}"
        )
    # Validates every sample (a NaN or ±inf is a ValueError naming metric and workload) and
    # gives the unpaired figures that are kept beside the paired ones.
    unpaired = compare(
        baseline,
        candidate,
        workload=workload,
        metric=metric,
        tier=tier,
        limit_pct=limit_pct,
        lower_is_better=lower_is_better,
        lane=lane,
    )
    base = [float(v) for v in baseline]
    cand = [float(v) for v in candidate]
    n = len(base)
    shell = replace(
        unpaired,
        delta_pct=math.nan,
        ci_low_pct=math.nan,
        ci_high_pct=math.nan,
        p_value=None,
        significant=False,
        supported=False,
        extra=_extra(None, None, alpha, n, unpaired),
    )
    if min(base + cand, default=1.0) <= 0.0:
        return replace(shell, note=_non_positive_note(base, cand))
    ratios = _log_ratios(base, cand)
    if n < MIN_SAMPLES:
        return replace(
            shell,
            delta_pct=_percent(ratios.trimmed_mean),
            note=f"fewer than {MIN_SAMPLES} pairs ({n}), so no test was run",
        )
    tests = _tests(ratios, alpha)
    significant = max(tests.p_t, tests.p_wilcoxon) < alpha
    low, high = _percent(tests.low), _percent(tests.high)
    rules_out = high < limit_pct if lower_is_better else low > -limit_pct
    estimate = _percent(ratios.trimmed_mean)
    finite = all(math.isfinite(x) for x in (low, high, estimate))
    return replace(
        shell,
        delta_pct=estimate,
        ci_low_pct=low,
        ci_high_pct=high,
        p_value=max(tests.p_t, tests.p_wilcoxon),
        significant=significant,
        supported=finite and (significant or rules_out),
        extra=_extra(ratios, tests, alpha, n, unpaired),
        note=(
            f"all {n} pairs have the same ratio, so the interval is a single point"
            if ratios.sd == 0.0
            else f"the {ratios.kept} middle pairs have the same ratio once the "
            f"{n - ratios.kept} outermost are winsorized, so the interval is a single point"
            if ratios.winsorized_sd == 0.0
            else ""
        ),
    )


def _log_ratios(base: list[float], cand: list[float]) -> _LogRatios:
    # ln(c) - ln(b) rather than ln(c / b): the quotient of two finite floats can overflow.
    values = tuple(math.log(c) - math.log(b) for b, c in zip(base, cand, strict=True))
    n = len(values)
    if n == 0:
        return _LogRatios(values, math.nan, math.nan, math.nan, math.nan, 0)
    # `moments` gives exactly 0 for a constant sample, as `unpaired` does for a constant side:
    # rounding in a two-pass variance would otherwise turn "no change" into an enormous t.
    plain = moments(list(values))
    import numpy as np
    from scipy import stats as sps
    from scipy.stats import mstats

    array = np.asarray(values)
    winsorized = moments([float(v) for v in mstats.winsorize(array, limits=(TRIM, TRIM))])
    return _LogRatios(
        values,
        plain.mean,
        math.sqrt(plain.var),
        float(sps.trim_mean(array, TRIM)),
        math.sqrt(winsorized.var),
        kept_pairs(n),
    )


def log_ratio_winsorized_sd(base: list[float], cand: list[float]) -> float:
    """The winsorized standard deviation of the per-pair log ratios ln(cand) - ln(base): the
    spread the trimmed t's standard error is built from, without any test."""
    return _log_ratios(base, cand).winsorized_sd


def kept_pairs(n: int) -> int:
    """The pairs the trimmed mean of `n` keeps: int(TRIM × n) are set aside at each end."""
    return n - 2 * int(TRIM * n)


def trimmed_standard_error(winsorized_sd: float, n: int) -> float:
    """Tukey-McLaughlin: the standard error of the trimmed mean of `n` log ratios whose
    winsorized standard deviation is `winsorized_sd`, sqrt((n - 1) s_w^2 / (h (h - 1)))."""
    h = kept_pairs(n)
    return winsorized_sd * math.sqrt((n - 1) / (h * (h - 1)))


def _tests(ratios: _LogRatios, alpha: float) -> _PairedTests:
    from scipy import stats as sps

    p_w = _wilcoxon_p(ratios.values) if ratios.sd > 0.0 else _constant_p(ratios.mean)
    plain_t, p_plain = _t_figures(ratios.mean, ratios.sd / math.sqrt(ratios.n), ratios.n - 1)
    h = ratios.kept
    se = trimmed_standard_error(ratios.winsorized_sd, ratios.n)
    t, p_t = _t_figures(ratios.trimmed_mean, se, h - 1)
    half = float(sps.t.ppf(1.0 - alpha / 2.0, h - 1)) * se
    low, high = ratios.trimmed_mean - half, ratios.trimmed_mean + half
    return _PairedTests(t, p_t, plain_t, p_plain, p_w, low, high)


def _t_figures(estimate: float, se: float, df: int) -> tuple[float, float]:
    """(t, two-sided p) of `estimate` against 0."""
    if se == 0.0:
        # scipy answers NaN here. The same ratio in every pair is no change when it is 1
        # (t = 0, p = 1) and a certain change otherwise (t = ±inf, p = 0), as in `unpaired`.
        if estimate == 0.0:
            return 0.0, 1.0
        return math.copysign(math.inf, estimate), 0.0
    from scipy import stats as sps

    t = estimate / se
    return t, float(2.0 * sps.t.sf(abs(t), df))


def _constant_p(mean: float) -> float:
    return 1.0 if mean == 0.0 else 0.0


def _wilcoxon_p(values: Sequence[float]) -> float:
    """Two-sided signed-rank p on the log ratios (zeros split, exact where exactness exists)."""
    import numpy as np
    from scipy import stats as sps

    magnitudes = [abs(v) for v in values]
    plain = 0.0 not in magnitudes and len(set(magnitudes)) == len(magnitudes)
    method: str | sps.PermutationMethod
    if plain and len(values) <= EXACT_WILCOXON_MAX:
        method = "exact"
    elif len(values) <= PERMUTATION_MAX:
        method = sps.PermutationMethod(n_resamples=2**PERMUTATION_MAX)
    else:
        method = "asymptotic"
    # An array, not a list: scipy's input handling costs twice the test itself on a list.
    result = sps.wilcoxon(np.asarray(values), zero_method="zsplit", method=method)
    return float(result.pvalue)


def _percent(log_ratio: float) -> float:
    # exp overflows a float above ln(1.8e308) ≈ 709.78: a ratio that large is "infinitely" more.
    if log_ratio > 709.0:
        return math.inf
    return math.expm1(log_ratio) * 100.0


def _extra(
    ratios: _LogRatios | None,
    tests: _PairedTests | None,
    alpha: float,
    n: int,
    unpaired: Comparison,
) -> tuple[tuple[str, float | None], ...]:
    return (
        ("trimmed_t", None if tests is None else tests.t),
        ("p_trimmed_t", None if tests is None else tests.p_t),
        ("paired_t", None if tests is None else tests.plain_t),
        ("p_paired_t", None if tests is None else tests.p_plain_t),
        ("p_wilcoxon", None if tests is None else tests.p_wilcoxon),
        ("log_ratio_mean", None if ratios is None else ratios.mean),
        ("log_ratio_sd", None if ratios is None else ratios.sd),
        ("log_ratio_trimmed_mean", None if ratios is None else ratios.trimmed_mean),
        ("log_ratio_winsorized_sd", None if ratios is None else ratios.winsorized_sd),
        ("alpha", alpha),
        ("pairs", float(n)),
        *unpaired.extra,
    )


def _non_positive_note(base: list[float], cand: list[float]) -> str:
    sides = [
        f"{side} has {count} value(s) <= 0 (smallest {min(values):g})"
        for side, values in (("baseline", base), ("candidate", cand))
        if (count := sum(v <= 0.0 for v in values))
    ]
    return (
        "; ".join(sides) + ", so a ratio of candidate to baseline does not exist and the reading "
        "supports nothing"
    )
