"""Baseline against candidate as pairs: per-pair log ratios, a paired t and a signed-rank test.

The timed lane measures in ABBA pairs (ADR 0003): the two runs of a pair are a fraction of a
second apart, so whatever the machine is doing at that moment (a warm page cache, a throttled
CPU, a neighbour's build) multiplies both. The ratio candidate / baseline of one pair cancels that
factor; the unpaired tests of `speedproof.stats.unpaired` count it as noise. On a series whose
speed drifts by ±15 % while each run has 0.5 % noise of its own, a real 2 % slowdown gives a
paired t of 15 and a Welch t of 0.6 (tests/test_stats_paired.py builds that case). Over
simulated streams with a shared drift, 5 % wins are accepted 99 % of the time from pairs and 88 %
from the unpaired rule (ADR 0020).

Why logarithms: timing noise is multiplicative (a busy machine makes every run some percent
slower, not some milliseconds), so r_i = ln(cand_i / base_i) has the same spread on a 10 ms and a
10 s workload, twice as slow and twice as fast are equally far from "no change", and log-normal
run noise becomes normal noise on r, where the t interval is exact. The reported change is the
geometric-mean ratio, (exp(mean r) - 1) × 100, and the interval is the paired t interval on
mean r at level 1 - alpha, mapped through exp.

Why two tests that must both agree: the t test weighs magnitudes, so one +30 % outlier run in 25
pairs moves mean r by 1 point and its p with it; the Wilcoxon signed-rank test ranks
magnitudes, so one outlier counts as one rank, but it cannot tell 19 pairs 1 % faster from 19
pairs 10 % faster. `significant` needs p < alpha from both, and `p_value` is the larger of the
two, so that significant ⟺ p_value < alpha and a Holm correction applied to `p_value` later
corrects the rule as it is. Requiring both costs power only where the two disagree, which is where
a verdict should not rest anyway (ADR 0020 has the simulated rates).

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

import numpy as np
from scipy import stats as sps

from speedproof.evidence import Comparison
from speedproof.stats.unpaired import MIN_SAMPLES, compare

# Largest number of pairs for which the exact signed-rank distribution is used (no zeros, no
# tied magnitudes): it covers the sequential schedule's 50 pairs in about half a millisecond.
EXACT_WILCOXON_MAX = 50
# With zeros or ties the exact distribution does not apply; up to this many pairs every one of
# the 2^n sign patterns is enumerated instead (2^13 = 8192), above it the normal approximation.
PERMUTATION_MAX = 13


@dataclass(frozen=True)
class _LogRatios:
    values: tuple[float, ...]
    mean: float
    sd: float

    @property
    def n(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class _PairedTests:
    t: float
    p_t: float
    p_wilcoxon: float
    # The (1 - alpha) interval on mean r, still on the log scale.
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

    `delta_pct` is the geometric-mean ratio as a percentage; the interval is the paired t interval
    at level 1 - alpha; `significant` is p(paired t) < alpha and p(Wilcoxon) < alpha; `p_value`
    is the larger of the two. `supported` is significant, or the interval rules out a worsening
    beyond `limit_pct` (as in `compare`). `welch_t`, `p_welch` and `p_mannwhitney` are the
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
            delta_pct=_percent(ratios.mean),
            note=f"fewer than {MIN_SAMPLES} pairs ({n}), so no test was run",
        )
    tests = _tests(ratios, alpha)
    significant = max(tests.p_t, tests.p_wilcoxon) < alpha
    low, high = _percent(tests.low), _percent(tests.high)
    rules_out = high < limit_pct if lower_is_better else low > -limit_pct
    finite = all(math.isfinite(x) for x in (low, high, _percent(ratios.mean)))
    return replace(
        shell,
        delta_pct=_percent(ratios.mean),
        ci_low_pct=low,
        ci_high_pct=high,
        p_value=max(tests.p_t, tests.p_wilcoxon),
        significant=significant,
        supported=finite and (significant or rules_out),
        extra=_extra(ratios, tests, alpha, n, unpaired),
        note=(
            f"all {n} pairs have the same ratio, so the interval is a single point"
            if ratios.sd == 0.0
            else ""
        ),
    )


def _log_ratios(base: list[float], cand: list[float]) -> _LogRatios:
    # ln(c) - ln(b) rather than ln(c / b): the quotient of two finite floats can overflow.
    values = tuple(math.log(c) - math.log(b) for b, c in zip(base, cand, strict=True))
    n = len(values)
    if n == 0:
        return _LogRatios(values, math.nan, math.nan)
    mean = math.fsum(values) / n
    # Exactly 0 when every ratio is the same, as `unpaired` does for a constant side: rounding
    # in a two-pass variance would otherwise turn "no change" into an enormous t.
    if n < 2 or min(values) == max(values):
        return _LogRatios(values, mean, 0.0)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return _LogRatios(values, mean, sd)


def _tests(ratios: _LogRatios, alpha: float) -> _PairedTests:
    if ratios.sd == 0.0:
        # scipy answers NaN here. The same ratio in every pair is no change when it is 1
        # (t = 0, p = 1) and a certain change otherwise (t = ±inf, p = 0), as in `unpaired`.
        if ratios.mean == 0.0:
            return _PairedTests(0.0, 1.0, 1.0, 0.0, 0.0)
        t = math.copysign(math.inf, ratios.mean)
        return _PairedTests(t, 0.0, 0.0, ratios.mean, ratios.mean)
    df = ratios.n - 1
    se = ratios.sd / math.sqrt(ratios.n)
    t = ratios.mean / se
    p_t = float(2.0 * sps.t.sf(abs(t), df))
    half = float(sps.t.ppf(1.0 - alpha / 2.0, df)) * se
    p_w = _wilcoxon_p(ratios.values)
    return _PairedTests(t, p_t, p_w, ratios.mean - half, ratios.mean + half)


def _wilcoxon_p(values: Sequence[float]) -> float:
    """Two-sided signed-rank p on the log ratios (zeros split, exact where exactness exists)."""
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
        ("paired_t", None if tests is None else tests.t),
        ("p_paired_t", None if tests is None else tests.p_t),
        ("p_wilcoxon", None if tests is None else tests.p_wilcoxon),
        ("log_ratio_mean", None if ratios is None else ratios.mean),
        ("log_ratio_sd", None if ratios is None else ratios.sd),
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
