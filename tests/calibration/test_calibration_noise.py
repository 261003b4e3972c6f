"""calibrate's noise summary: the no-change trials' spread per pair, and the wins it resolves."""

from __future__ import annotations

import pytest
from rich.console import Console

from speedproof.calibration.command import render_report
from speedproof.calibration.noise import summarise
from speedproof.calibration.trials import CalibrationReport, Trial, TrialKind
from speedproof.stats import Schedule
from speedproof.stats.power import pairs_to_resolve, resolvable_win_pct

SCHEDULE = {"round_pairs": 10, "max_pairs": 50, "alpha": 0.05, "rho": 1.0}


def trial(kind: TrialKind, index: int, winsorized: float) -> Trial:
    spreads = {"shop": (2 * winsorized, winsorized), "api": (0.02, 0.01)}
    return Trial(kind, index, "inconclusive", 50, 5, "r", spreads)


def report() -> CalibrationReport:
    trials = (
        trial("a/a", 0, 0.05),
        trial("null", 0, 0.07),
        trial("a/a", 1, 0.09),
        trial("win", 0, 0.90),  # a real change: its ratios are not noise
    )
    win = {"kind": "patch", "win_pct": None, "sizing": None}
    return CalibrationReport("t", "abc", SCHEDULE, win, trials, "bwrap", floor_pct=3.0)


def test_the_noise_of_a_calibration_is_the_median_over_its_no_change_trials_alone() -> None:
    shop, api = report().noise()
    assert (shop.workload, shop.readings) == ("shop", 3)
    assert shop.winsorized_sd_pct == pytest.approx(7.0) and shop.sd_pct == pytest.approx(14.0)
    assert shop.resolvable_win_pct == pytest.approx(
        resolvable_win_pct(0.07, Schedule(), workloads=2)
    )
    assert shop.win_pct == 6.0  # twice the floor
    assert shop.pairs_for_win == pairs_to_resolve(6.0, 0.07, Schedule(), workloads=2)
    assert api.resolvable_win_pct < shop.resolvable_win_pct
    assert summarise([], Schedule(), 3.0) == []


def test_the_printed_calibration_shows_the_noise_and_the_win_it_resolves() -> None:
    console = Console(record=True, width=200)
    render_report(report(), console)
    text = console.export_text()
    assert "win resolved 9 in 10 at 50 pairs" in text
    shop = report().noise()[0]
    assert f"{shop.resolvable_win_pct:.1f}%" in text and "7.0%" in text and "14.0%" in text
    assert "Wins below the resolved size mostly end inconclusive" in text
    assert "a larger [policy] max_pairs, [policy] timed_cpus" in text


def test_a_calibration_without_timed_readings_prints_no_noise_table() -> None:
    quiet = CalibrationReport(
        "t", "abc", SCHEDULE, report().win, (Trial("a/a", 0, "accepted", 0, 1, "r"),), "bwrap"
    )
    console = Console(record=True, width=200)
    render_report(quiet, console)
    assert quiet.noise() == [] and "noise of the primary metric" not in console.export_text()
