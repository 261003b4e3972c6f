"""What a schedule resolves at a given noise, checked against simulated streams of known noise."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from speedproof.stats import Schedule, paired_compare
from speedproof.stats.power import (
    MAX_SUGGESTED_PAIRS,
    acceptance_probability,
    pairs_to_resolve,
    resolvable_win_pct,
)

SIGMA = 0.08  # per-pair log-ratio noise of the simulated machine


def _p_trimmed_t(ratios: np.ndarray, alpha: float) -> tuple[float, float]:
    """(p of the trimmed t, winsorized sd) of one simulated stream of log ratios."""
    reading = paired_compare(
        [1.0] * len(ratios),
        [float(v) for v in np.exp(ratios)],
        workload="w",
        metric="wall",
        tier="representative",
        limit_pct=2.0,
        alpha=alpha,
    )
    extra = dict(reading.extra)
    p, sd = extra["p_trimmed_t"], extra["log_ratio_winsorized_sd"]
    assert p is not None and sd is not None
    return p, sd


@pytest.mark.slow
def test_the_resolved_win_is_found_significant_nine_times_in_ten_at_the_last_look() -> None:
    schedule = Schedule()  # five looks of ten pairs, the last at 0.01
    last = schedule.alpha_at(schedule.looks())
    rng = np.random.default_rng(7)
    noise = [_p_trimmed_t(rng.normal(0.0, SIGMA, 50), last)[1] for _ in range(400)]
    win = resolvable_win_pct(statistics.median(noise), schedule)
    d = math.log(1.0 - win / 100.0)
    found = [_p_trimmed_t(rng.normal(d, SIGMA, 50), last)[0] < last for _ in range(1000)]
    assert 0.86 <= sum(found) / len(found) <= 0.94
    # and a win half that size is found far less often
    half = math.log(1.0 - win / 200.0)
    weaker = [_p_trimmed_t(rng.normal(half, SIGMA, 50), last)[0] < last for _ in range(400)]
    assert sum(weaker) / len(weaker) < 0.5


def test_more_noise_fewer_pairs_and_more_workloads_each_raise_the_resolved_win() -> None:
    schedule = Schedule()
    base = resolvable_win_pct(0.08, schedule)
    assert resolvable_win_pct(0.16, schedule) > base
    assert resolvable_win_pct(0.08, Schedule(max_pairs=20)) > base
    assert resolvable_win_pct(0.08, schedule, workloads=2) > base
    assert resolvable_win_pct(0.0, schedule) == 0.0


def test_the_pairs_to_resolve_a_win_are_the_first_whole_round_that_resolves_it() -> None:
    schedule = Schedule()
    pairs = pairs_to_resolve(5.0, 0.10, schedule)
    assert pairs is not None and pairs % schedule.round_pairs == 0
    longer = Schedule(max_pairs=pairs)
    shorter = Schedule(max_pairs=pairs - schedule.round_pairs)
    assert resolvable_win_pct(0.10, longer) <= 5.0 < resolvable_win_pct(0.10, shorter)
    assert pairs_to_resolve(0.1, 0.30, schedule) is None  # beyond MAX_SUGGESTED_PAIRS
    assert resolvable_win_pct(0.30, Schedule(max_pairs=MAX_SUGGESTED_PAIRS)) > 0.1
    assert pairs_to_resolve(150.0, 0.30, schedule) == schedule.round_pairs


def test_impossible_noise_figures_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="standard deviation"):
        resolvable_win_pct(math.nan, Schedule())
    with pytest.raises(ValueError, match="workload"):
        resolvable_win_pct(0.1, Schedule(), workloads=0)
    with pytest.raises(ValueError, match="power"):
        resolvable_win_pct(0.1, Schedule(), power=1.0)
    with pytest.raises(ValueError, match="above 0"):
        pairs_to_resolve(0.0, 0.1, Schedule())


def test_the_resolved_win_is_the_one_whose_acceptance_probability_is_nine_in_ten() -> None:
    schedule = Schedule()
    win = resolvable_win_pct(0.085, schedule)
    assert acceptance_probability(win, 0.085, schedule) == pytest.approx(0.9, abs=1e-6)
    assert acceptance_probability(win / 2, 0.085, schedule) < 0.5
    assert acceptance_probability(3.0, 0.0, schedule) == 1.0
    with pytest.raises(ValueError, match="win"):
        acceptance_probability(100.0, 0.085, schedule)
