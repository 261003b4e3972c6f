"""The sequential schedule's error spending, on synthetic streams whose answers are known.

The stopping rule itself is `SequentialRule`, tested in
tests/judge/measure/test_sequential_rule.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import mstats

from speedproof.judge.policy.evidence import Comparison
from speedproof.stats import DEFAULT_RHO, Schedule, paired_compare


def reading(
    baseline: list[float], candidate: list[float], alpha: float, *, lower_is_better: bool = True
) -> Comparison:
    return paired_compare(
        baseline,
        candidate,
        workload="parse",
        metric="wall",
        tier="representative",
        limit_pct=2.0,
        lower_is_better=lower_is_better,
        alpha=alpha,
    )


def stream(n: int, cv: float, ratio: float, seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    base = 0.1 * np.exp(rng.normal(0.0, cv, n))
    cand = 0.1 * ratio * np.exp(rng.normal(0.0, cv, n))
    return [float(x) for x in base], [float(x) for x in cand]


def at_look(schedule: Schedule, look: int, base: list[float], cand: list[float]) -> Comparison:
    pairs = schedule.pairs_at(look)
    return reading(base[:pairs], cand[:pairs], schedule.alpha_at(look))


def test_the_default_schedule_looks_every_ten_pairs_up_to_fifty() -> None:
    schedule = Schedule()
    assert (schedule.round_pairs, schedule.max_pairs, schedule.alpha) == (10, 50, 0.05)
    assert schedule.rho == DEFAULT_RHO == 1.0
    assert schedule.looks() == 5
    assert [schedule.pairs_at(k) for k in range(1, 6)] == [10, 20, 30, 40, 50]
    # 0.05 × t at t = 0.2, 0.4, ... 1.0, differenced: 0.01 a look.
    assert [schedule.alpha_at(k) for k in range(1, 6)] == pytest.approx([0.01] * 5)
    # 0.05 × t^1.5, differenced, when asked for.
    shaped = Schedule(rho=1.5)
    expected = [0.05 * (k / 5) ** 1.5 - 0.05 * ((k - 1) / 5) ** 1.5 for k in range(1, 6)]
    assert [shaped.alpha_at(k) for k in range(1, 6)] == pytest.approx(expected)
    assert expected[0] == pytest.approx(0.00447, abs=1e-5)


@pytest.mark.parametrize(
    "schedule",
    [
        Schedule(),
        Schedule(rho=1.0),
        Schedule(rho=3.0),
        Schedule(round_pairs=7, max_pairs=45, alpha=0.01, rho=1.5),
        Schedule(round_pairs=4, max_pairs=100),
    ],
)
def test_the_levels_are_positive_grow_with_the_spending_and_sum_to_alpha(
    schedule: Schedule,
) -> None:
    levels = [schedule.alpha_at(k) for k in range(1, schedule.looks() + 1)]
    assert all(level > 0.0 for level in levels)
    assert math.fsum(levels) == pytest.approx(schedule.alpha, rel=1e-12)
    assert schedule.spent_at(schedule.looks()) == schedule.alpha
    assert schedule.spent_at(0) == 0.0


def test_the_last_look_is_the_maximum_even_off_the_round_grid() -> None:
    schedule = Schedule(round_pairs=10, max_pairs=45)
    assert schedule.looks() == 5
    assert [schedule.pairs_at(k) for k in range(1, 6)] == [10, 20, 30, 40, 45]
    assert schedule.look_of(45) == 5
    with pytest.raises(ValueError, match=r"50 pairs is not a look of this schedule \(10, 20"):
        schedule.look_of(50)


def test_a_fixed_schedule_is_one_look_spending_all_alpha() -> None:
    fixed = Schedule.fixed(25)
    assert fixed.looks() == 1
    assert fixed.pairs_at(1) == 25
    assert fixed.alpha_at(1) == 0.05
    assert Schedule.fixed(30, alpha=0.01).alpha_at(1) == 0.01


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"round_pairs": 3}, "at least 4 pairs"),
        ({"round_pairs": 10, "max_pairs": 9}, "must be at least round_pairs"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 0.5}, "alpha"),
        ({"alpha": math.nan}, "alpha"),
        ({"rho": 0.0}, "rho"),
        ({"rho": math.inf}, "rho"),
    ],
)
def test_a_nonsense_schedule_is_an_error(arguments: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Schedule(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("look", [0, 6, -1])
def test_a_look_outside_the_schedule_is_an_error(look: int) -> None:
    with pytest.raises(ValueError, match=r"look must lie in 1\.\.5"):
        Schedule().alpha_at(look)


def a_a_logs(noise: str, streams: int, rng: np.random.Generator) -> np.ndarray:
    """Log ratios of `streams` A/A streams of 50 pairs: 5 % CV log-normal runs, or runs whose
    log noise is Student's t with 3 degrees of freedom at the same 5 % median spread (kurtosis
    without bound, as on a shared machine)."""
    if noise == "normal":
        draws = rng.normal(0.0, 0.05, (2, streams, 50))
    else:
        draws = 0.05 / 0.765 * rng.standard_t(3, (2, streams, 50))
    return np.asarray(draws[1] - draws[0])


@pytest.mark.parametrize("noise", ["normal", "heavy-tailed"])
def test_over_two_thousand_a_a_streams_spending_stays_within_alpha_and_naive_peeking_does_not(
    noise: str,
) -> None:
    # Every look taken (10, 20, 30, 40, 50 pairs, no change). The union bound promises at most
    # 5 % of streams significant at some look; A paired t at 0.05 at every look, on the same
    # streams, reads about three times that. The bound is 5 % plus three binomial standard
    # errors at 2000 streams (1.46 points): 6.46 %.
    schedule = Schedule()
    streams = 2000
    logs = a_a_logs(noise, streams, np.random.default_rng(20240607))
    base = 0.1 * np.ones((streams, 50))
    cand = base * np.exp(logs)
    ours = np.zeros(streams, dtype=bool)
    naive = np.zeros(streams, dtype=bool)
    skipped: list[tuple[int, int]] = []
    for look in range(1, schedule.looks() + 1):
        n = schedule.pairs_at(look)
        # A screen, so that 10,000 readings cost seconds: a reading whose trimmed t p and plain
        # t p are both 0.05 or more is significant neither at alpha_k < 0.05 (p_value is the
        # larger of the trimmed t and signed-rank p) nor for naive peeking. Every other reading
        # goes through `paired_compare`, and a sample of the screened ones is checked below.
        plain = sps.ttest_1samp(logs[:, :n], 0.0, axis=1).pvalue
        trimmed = trimmed_p(logs[:, :n])
        for i in range(streams):
            if min(plain[i], trimmed[i]) >= 0.05:
                skipped.append((i, look))
                continue
            result = at_look(schedule, look, list(base[i]), list(cand[i]))
            figures = dict(result.extra)
            assert figures["p_trimmed_t"] == pytest.approx(trimmed[i])
            p_t = figures["p_paired_t"]
            assert p_t == pytest.approx(plain[i])
            ours[i] |= result.significant
            naive[i] |= p_t is not None and p_t < 0.05
    rng = np.random.default_rng(7)
    for index in rng.choice(len(skipped), 200, replace=False):
        i, look = skipped[index]
        result = at_look(schedule, look, list(base[i]), list(cand[i]))
        assert not result.significant
        figures = dict(result.extra)
        assert figures["p_trimmed_t"] == pytest.approx(trimmed_p(logs[i : i + 1, : result.n])[0])
        assert figures["p_paired_t"] == pytest.approx(screen_p(logs[i], result.n))
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / streams)
    assert ours.mean() <= bound
    assert naive.mean() > bound


def trimmed_p(logs: np.ndarray) -> np.ndarray:
    """The two-sided p of the 10 %-trimmed t of every row, from scipy's trimming and
    winsorizing (Tukey-McLaughlin standard error)."""
    n = logs.shape[1]
    kept = n - 2 * int(0.1 * n)
    trimmed = sps.trim_mean(logs, 0.1, axis=1)
    winsorized = np.asarray(mstats.winsorize(logs, limits=(0.1, 0.1), axis=1))
    se = np.std(winsorized, axis=1, ddof=1) * math.sqrt((n - 1) / (kept * (kept - 1)))
    return np.asarray(2.0 * sps.t.sf(np.abs(trimmed / se), kept - 1))


def screen_p(logs: np.ndarray, n: int) -> float:
    return float(sps.ttest_1samp(logs[:n], 0.0).pvalue)
