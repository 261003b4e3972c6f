"""Turn measured series into comparisons: one per metric per workload, plus binary size."""

from __future__ import annotations

from speedproof.evidence import Comparison
from speedproof.measure.runner import Metric, PairSeries
from speedproof.stats import compare

TIMED_METRICS: tuple[Metric, ...] = ("wall", "cpu", "memory")


def series_comparisons(series: PairSeries, *, tier: str, limit_pct: float) -> list[Comparison]:
    """Wall, CPU and peak memory of one workload, from its complete pairs only."""
    return [
        compare(
            series.values("baseline", metric),
            series.values("candidate", metric),
            workload=series.workload,
            metric=metric,
            tier=tier,
            limit_pct=limit_pct,
            lane="timed",
        )
        for metric in TIMED_METRICS
    ]


def size_comparison(baseline: int, candidate: int) -> Comparison:
    """Binary size is deterministic: one reading a side, and any change is a real change.

    It is marked significant when it differs at all (there is no noise to rule out) and always
    supported; the policy's limit then decides whether the growth matters.
    """
    delta = (candidate - baseline) / baseline * 100.0 if baseline else float("nan")
    return Comparison(
        workload="(build)",
        metric="binary_size",
        tier="representative",
        n_baseline=1,
        n_candidate=1,
        baseline_mean=float(baseline),
        candidate_mean=float(candidate),
        delta_pct=delta,
        ci_low_pct=delta,
        ci_high_pct=delta,
        p_value=None,
        welch_t=None,
        p_welch=None,
        p_mannwhitney=None,
        significant=candidate != baseline,
        supported=True,
        lane="build",
    )
