"""calibrate's side check: do the no-change trials lean one way, or scatter wider than their
tests expect? Synthetic scores and pairs with known answers."""

from __future__ import annotations

import math

import pytest
from rich.console import Console
from scipy import stats as sps

from speedproof.calibration.command import render_report
from speedproof.calibration.sides import check_sides, trial_scores
from speedproof.calibration.trials import CalibrationReport, Trial, TrialKind
from speedproof.judge.policy.evidence import Evidence
from speedproof.stats.paired import paired_compare
from support.evidence import gates_passed

SCHEDULE = {"round_pairs": 10, "max_pairs": 50, "alpha": 0.05, "rho": 1.0}


def evidence_of(base: list[float], cand: list[float], metric: str = "wall") -> Evidence:
    reading = paired_compare(
        base, cand, workload="shop", metric=metric, tier="representative", limit_pct=2.0
    )
    return gates_passed(reading)


def test_a_trials_score_is_the_normal_quantile_of_its_trimmed_t_with_the_ts_sign() -> None:
    base = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98, 1.01, 0.99, 1.03]
    factors = (1.05, 1.01, 1.08, 0.99, 1.04, 1.06, 1.0, 1.03, 1.07, 1.02)
    slower = [b * f for b, f in zip(base, factors, strict=True)]
    p = dict(evidence_of(base, slower).comparisons[0].extra)["p_trimmed_t"]
    assert p is not None
    (score,) = trial_scores(evidence_of(base, slower), "wall").values()
    assert score == pytest.approx(sps.norm.isf(p / 2.0))
    assert score > 0
    (faster,) = trial_scores(evidence_of(slower, base), "wall").values()
    assert faster == pytest.approx(-score)
    # other metrics than the primary one are not scored
    assert trial_scores(evidence_of(base, slower, metric="cpu"), "wall") == {}


def test_a_trial_whose_every_pair_has_one_ratio_scores_finitely() -> None:
    base = [1.0] * 10
    (score,) = trial_scores(evidence_of(base, [1.1] * 10), "wall").values()
    assert math.isfinite(score) and score > 8.0


def test_scores_that_balance_and_scatter_as_expected_are_neither_a_lean_nor_a_spread() -> None:
    (check,) = check_sides([("a/a", {"shop": z}) for z in (0.5, -0.5, 1.0, -1.0)])
    assert (check.kind, check.workload, check.trials) == ("a/a", "shop", 4)
    assert check.lean_z == pytest.approx(0.0) and check.lean_p == pytest.approx(1.0)
    assert check.spread == pytest.approx(0.625)
    assert check.spread_p == pytest.approx(sps.chi2.sf(2.5, 4))


def test_trials_that_all_lean_the_same_way_are_a_lean() -> None:
    # four trials at -1.45 each: none significant alone, p = 0.004 together (Stouffer)
    (check,) = check_sides([("a/a", {"shop": -1.45})] * 4)
    assert check.lean_z == pytest.approx(-2.9)
    assert check.lean_p == pytest.approx(2.0 * sps.norm.sf(2.9))
    assert check.lean_p < 0.01


def test_trials_that_scatter_wider_than_their_tests_are_a_spread_but_not_a_lean() -> None:
    (check,) = check_sides([("null", {"shop": z}) for z in (3.0, -3.0, 3.0, -3.0)])
    assert check.lean_p == pytest.approx(1.0)
    assert check.spread == pytest.approx(9.0) and check.spread_p < 1e-6


def test_each_kind_and_workload_is_checked_apart() -> None:
    checks = check_sides(
        [("a/a", {"shop": 1.0, "api": -1.0}), ("null", {"shop": 0.2}), ("a/a", {"shop": 2.0})]
    )
    assert [(c.kind, c.workload, c.trials) for c in checks] == [
        ("a/a", "shop", 2),
        ("a/a", "api", 1),
        ("null", "shop", 1),
    ]


def trial(kind: TrialKind, index: int, score: float) -> Trial:
    return Trial(kind, index, "inconclusive", 10, 1, "r", {}, {}, {"shop": score})


def test_the_printed_calibration_warns_when_the_no_change_trials_lean_one_way() -> None:
    leaning = [trial("a/a", i, -1.45) for i in range(4)]
    balanced = [trial("null", i, (-1) ** i * 0.5) for i in range(4)]
    trials = (*leaning, *balanced, trial("win", 0, -9.0))
    win = {"kind": "patch", "win_pct": None, "sizing": None}
    report = CalibrationReport("t", "abc", SCHEDULE, win, trials, "bwrap")
    console = Console(record=True, width=200)
    render_report(report, console)
    text = console.export_text()
    assert "do the no-change trials lean one way?" in text
    assert "warning: the a/a trials on shop lean one way (p = 0.00373)" in text
    assert "warning: the null trials" not in text
    # the win trial is a real change: it is not checked
    assert [row["kind"] for row in report.to_json()["sides"]] == ["a/a", "null"]


def test_a_calibration_of_balanced_trials_prints_the_check_without_a_warning() -> None:
    trials = tuple(trial("a/a", i, z) for i, z in enumerate((0.3, -0.8, 1.1, -0.2)))
    win = {"kind": "patch", "win_pct": None, "sizing": None}
    console = Console(record=True, width=200)
    render_report(CalibrationReport("t", "abc", SCHEDULE, win, trials, "bwrap"), console)
    text = console.export_text()
    assert "mean squared score" in text and "warning" not in text
