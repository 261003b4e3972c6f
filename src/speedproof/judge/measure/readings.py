"""Turn measured series into comparisons: one per metric per workload, plus binary size.

The timed lane's pairs are analysed as pairs (`stats.paired_compare`: per-pair log ratios, a
trimmed paired t and a Wilcoxon signed-rank test) at the current look's level; then, within each
metric, Holm's correction across the workloads, so that the chance that ANY workload shows a false
significant change stays at the look's level however many workloads the manifest declares.

The reported lane's metrics (whatever a benchmark prints) are compared unpaired
(`stats.welch_compare`): such a metric may be 0 (a success rate), and a log ratio of 0 does not
exist. They are tested at the same level as the timed lane (the manifest's alpha: a reported
target's schedule is one look, `Schedule.fixed(repeats, alpha)`) and go through the same Holm
correction within each metric, so for every tested reading `significant` is exactly "the
Holm-adjusted p (`p_holm` in `extra`) is below alpha", and `p_value` is the p of the one test
that decided it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from speedproof.judge.measure.runner import METRICS, Metric, PairSeries
from speedproof.judge.policy.evidence import Comparison, exact_comparison
from speedproof.manifest import Manifest
from speedproof.stats import holm, paired_compare, welch_compare

TIMED_METRICS: tuple[Metric, ...] = METRICS


def series_comparisons(
    series: PairSeries, *, tier: str, limit_pct: float, alpha: float = 0.05
) -> list[Comparison]:
    """Wall, CPU and peak memory of one workload, from its complete pairs only, as pairs."""
    return [
        paired_compare(
            series.values("baseline", metric),
            series.values("candidate", metric),
            workload=series.workload,
            metric=metric,
            tier=tier,
            limit_pct=limit_pct,
            lane="timed",
            alpha=alpha,
        )
        for metric in TIMED_METRICS
    ]


def reported_comparisons(
    series: PairSeries,
    *,
    tier: str,
    limits: Mapping[str, float],
    lower: Mapping[str, bool],
    alpha: float,
) -> list[Comparison]:
    """Each reported metric of one workload, unpaired (a reported metric may be 0), by Welch's
    t at `alpha`; the limit is kept in `extra` so that Holm can recompute `supported`."""
    found = []
    for metric in lower:
        c = welch_compare(
            series.values("baseline", metric),
            series.values("candidate", metric),
            workload=series.workload,
            metric=metric,
            tier=tier,
            limit_pct=limits[metric],
            lower_is_better=lower[metric],
            lane="reported",
            alpha=alpha,
        )
        found.append(replace(c, extra=(*c.extra, ("limit_pct", limits[metric]))))
    return found


def holm_within_metrics(comparisons: Sequence[Comparison], alpha: float) -> list[Comparison]:
    """Holm across workloads within each metric (holdout apart); exact and untested readings pass
    unchanged.

    A reading stays significant only when its Holm-adjusted p is below `alpha`; its `supported`
    is recomputed from the new significance and its own interval, and the adjusted p is kept in
    `extra` as `p_holm`.
    """
    tested = [i for i, c in enumerate(comparisons) if c.p_value is not None and not c.exact]
    adjusted = list(comparisons)
    for key in {_family(comparisons[i]) for i in tested}:
        family = [i for i in tested if _family(comparisons[i]) == key]
        p_values = [float(comparisons[i].p_value or 0.0) for i in family]
        for i, p_holm in zip(family, holm(p_values), strict=True):
            adjusted[i] = _with_holm(comparisons[i], p_holm, alpha)
    return adjusted


def _family(c: Comparison) -> tuple[str, str, bool]:
    """Holm families: one metric of one lane, and holdout workloads apart from the others.

    The lane is part of the key because a reported metric's name is the benchmark's own and
    may be a timed metric's too (`wall`); the two are different measurements.

    Holdout workloads are measured only once an accept stands, to catch a regression; their
    readings must not dilute the representative family the accept rests on (three workloads
    instead of two would triple the smallest p instead of doubling it).
    """
    return c.lane, c.metric, c.tier == "holdout"


def _with_holm(c: Comparison, p_holm: float, alpha: float) -> Comparison:
    significant = c.significant and p_holm < alpha
    limit = dict(c.extra).get("limit_pct")
    rules_out = False
    if limit is not None and c.finite:
        rules_out = c.ci_high_pct < limit if c.lower_is_better else c.ci_low_pct > -limit
    return replace(
        c,
        significant=significant,
        supported=c.finite and (significant or rules_out),
        extra=(*c.extra, ("p_holm", p_holm)),
    )


def lane_comparisons(
    measured: Mapping[str, PairSeries],
    manifest: Manifest,
    *,
    tiers: Mapping[str, str],
    alpha: float,
) -> list[Comparison]:
    """Every reading of every measured workload at level `alpha`, Holm within each metric of
    each lane (timed and reported alike)."""
    rules = manifest.rules()
    tested: list[Comparison] = []
    for workload_id, series in measured.items():
        for c in series_comparisons(
            series, tier=tiers[workload_id], limit_pct=rules.limit_for("wall"), alpha=alpha
        ):
            tested.append(replace(c, extra=(*c.extra, ("limit_pct", rules.limit_for(c.metric)))))
    reported = manifest.reported
    if reported is not None:
        lower = {name: d == "lower" for name, d in reported.directions().items()}
        limits = {name: rules.limit_for(name) for name in lower}
        for workload_id, series in measured.items():
            tested += reported_comparisons(
                series, tier=tiers[workload_id], limits=limits, lower=lower, alpha=alpha
            )
    return holm_within_metrics(tested, alpha)


def size_comparison(baseline: int, candidate: int) -> Comparison:
    """Binary size is deterministic: one reading a side, and any change is a real change."""
    return exact_comparison(
        workload="(build)",
        metric="binary_size",
        tier="representative",
        lane="build",
        baseline=baseline,
        candidate=candidate,
    )
