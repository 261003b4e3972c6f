"""The reported lane's readings: the manifest's alpha, Holm within each metric, one test.

The samples are synthetic with known answers: each side's mean and standard deviation are set
exactly, so Welch's t, and with it p, is known before the test runs. Nothing is timed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from speedproof.ground.program import Side
from speedproof.judge.measure.environment import LoadSnapshot
from speedproof.judge.measure.readings import lane_comparisons
from speedproof.judge.measure.runner import LoadWindow, PairSeries, Sample
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.policy.evidence import Comparison
from speedproof.manifest import Manifest
from speedproof.manifest_loading import parse_manifest
from support.toy_target import reported_tables, toy_manifest, workload_table

MANIFEST = toy_manifest(
    workload_table("a", "prog.py", tier="representative"),
    workload_table("b", "prog.py", "b", tier="representative"),
    instructions=False,
    extra=reported_tables(10),
    policy="guardrails = []\nalpha = {alpha}",
)
N = 10


def manifest(alpha: float) -> Manifest:
    return parse_manifest(MANIFEST.format(alpha=alpha), "speedproof.toml")


def shaped(mean: float, sd: float, seed: int, n: int = N) -> list[float]:
    """`n` values whose mean and sample standard deviation are exactly `mean` and `sd`."""
    z = np.random.default_rng(seed).standard_normal(n)
    return [float(x) for x in mean + sd * (z - z.mean()) / z.std(ddof=1)]


def gap_for(p: float, sd: float = 1.0, n: int = N) -> float:
    """The difference of means at which Welch's two-sided p is exactly `p`, for two samples of
    `n` values with standard deviation `sd` each (equal variances: df = 2n - 2)."""
    return float(sps.t.ppf(1.0 - p / 2.0, 2 * n - 2)) * sd * math.sqrt(2.0 / n)


def series(workload: str, latency: tuple[list[float], list[float]], success: float) -> PairSeries:
    """ABBA pairs whose runs report `latency` (baseline, candidate) and a constant `success`."""
    samples: list[Sample] = []
    sides: tuple[Side, Side] = ("baseline", "candidate")
    for index in range(len(latency[0])):
        for position, side in enumerate(sides if index % 2 == 0 else sides[::-1]):
            value = latency[sides.index(side)][index]
            reported = (("latency_s", value), ("success", success))
            samples.append(
                Sample(side, index, position, 0.1, 0.1, 20480, 0, "", "", reported=reported)
            )
    quiet = LoadSnapshot(0.0, 0.0, 0.0, 0.0)
    window = (LoadWindow(quiet, quiet),)
    return PairSeries(workload, tuple(samples), (), (), (), window, (60.0,))


def latency_pair(p: float, seed: int) -> tuple[list[float], list[float]]:
    """Baseline around 100 s, the candidate faster by the gap at which Welch's p is `p`."""
    return shaped(100.0, 1.0, seed), shaped(100.0 - gap_for(p), 1.0, seed + 1)


def reported(found: list[Comparison], workload: str, metric: str = "latency_s") -> Comparison:
    return next(c for c in found if c.workload == workload and c.metric == metric)


def readings(loaded: Manifest, measured: dict[str, PairSeries]) -> list[Comparison]:
    """Every reading at the level the judge's schedule gives this manifest's one look."""
    alpha = schedule_for(loaded).alpha_at(1)
    return lane_comparisons(
        measured, loaded, tiers={"a": "representative", "b": "representative"}, alpha=alpha
    )


def test_a_reported_reading_with_p_of_0_03_is_not_significant_at_alpha_0_01() -> None:
    measured = {"a": series("a", latency_pair(0.03, 1), 0.78)}
    strict = reported(readings(manifest(0.01), measured), "a")
    assert not strict.significant
    assert strict.p_value == pytest.approx(0.03, rel=1e-6)
    assert "p=0.030" in strict.render()
    # The same samples under the default alpha are significant: the manifest's alpha decides.
    assert reported(readings(manifest(0.05), measured), "a").significant


def test_two_reported_workloads_of_one_metric_are_holm_adjusted() -> None:
    measured = {
        "a": series("a", latency_pair(0.03, 1), 0.78),
        "b": series("b", latency_pair(0.04, 3), 0.78),
    }
    found = readings(manifest(0.05), measured)
    first, second = reported(found, "a"), reported(found, "b")
    # Each alone is significant at 0.05; Holm doubles the smaller p (0.06) and keeps the larger
    # at that running maximum, so neither is.
    assert (first.p_value, second.p_value) == pytest.approx((0.03, 0.04), rel=1e-6)
    holm = (dict(first.extra)["p_holm"], dict(second.extra)["p_holm"])
    assert holm == pytest.approx((0.06, 0.06), rel=1e-6)
    assert not first.significant and not second.significant
    # `success` is a family of its own: constant and equal on both sides, p = 1 everywhere.
    assert dict(reported(found, "a", "success").extra)["p_holm"] == 1.0


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("seed", range(8))
def test_a_reading_is_significant_exactly_when_its_adjusted_p_is_below_alpha(
    seed: int, alpha: float
) -> None:
    rng = np.random.default_rng(seed)
    measured: dict[str, PairSeries] = {}
    for index, workload in enumerate(("a", "b")):
        # Changes from none to clear, spread 1-5 %; seed 0's workload a is a constant change
        # (both sides constant), where the Mann-Whitney and Welch p differ the most.
        gap, sd = float(rng.uniform(0.0, 4.0)), float(rng.uniform(1.0, 5.0))
        base = shaped(100.0, sd, seed * 10 + index)
        cand = shaped(100.0 - gap, sd, seed * 10 + index + 5)
        if seed == 0 and workload == "a":
            base, cand = [100.0] * N, [99.0] * N
        success = float(rng.choice([0.5, 0.78]))
        measured[workload] = series(workload, (base, cand), success)
    for c in readings(manifest(alpha), measured):
        if c.p_value is None:
            assert not c.significant
            continue
        assert c.significant == (dict(c.extra)["p_holm"] < alpha), c
        if c.lane == "reported":
            # The p shown is the p of the test that decides: Welch's.
            assert c.p_value == c.p_welch
            assert dict(c.extra)["alpha"] == alpha
