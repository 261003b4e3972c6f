"""The pure parts of benchmarks/rule_evaluation.py on synthetic streams with known answers.

No timing is measured here: the streams are made up, each with a margin wide enough that the
answer does not hang on a rounding. The benchmark that measures real streams prints figures.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from rule_evaluation import (
    NOT_APPLIED,
    StreamError,
    TrialStream,
    anchor_rule,
    decided,
    evaluate,
    markdown,
    mwu_rule,
    predicted_acceptance,
    realized_wins,
    rules_for,
    sequential_rule,
    stream_from_json,
)
from speedproof.judge.measure.replay import RecordedWorkload
from speedproof.manifest import Manifest
from speedproof.manifest_loading import parse_manifest
from speedproof.stats import Schedule
from speedproof.stats.power import acceptance_probability
from support.toy_target import toy_manifest, workload_table

MANIFEST = toy_manifest(
    workload_table("w", "prog.py", tier="representative"),
    instructions=False,
    policy='guardrails = ["cpu", "memory"]',
)
SCHEDULE = Schedule(round_pairs=10, max_pairs=50)


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return parse_manifest(MANIFEST, "speedproof.toml")


def _noise(seed: int, n: int, cv: float) -> list[float]:
    rng = random.Random(seed)
    return [1.0 + rng.gauss(0.0, cv) for _ in range(n)]


def _workload(baseline: list[float], candidate: list[float]) -> RecordedWorkload:
    """Wall and CPU alike; peak memory a constant 20 MiB on both sides."""
    memory = [20480.0] * len(baseline)
    return RecordedWorkload(
        "w",
        {"wall": baseline, "cpu": baseline, "memory": memory},
        {"wall": candidate, "cpu": candidate, "memory": memory},
    )


def _trial(baseline: list[float], candidate: list[float], kind: str = "win") -> TrialStream:
    return TrialStream(
        "t#0", kind, 0.0 if kind == "a/a" else 10.0, (_workload(baseline, candidate),)
    )


def _scaled(values: list[float], factor: float) -> list[float]:
    return [v * factor for v in values]


def test_a_prefix_keeps_the_first_pairs_of_every_metric_in_abba_order() -> None:
    base = [float(i) for i in range(1, 7)]
    cand = [10.0 * v for v in base]
    part = _workload(base, cand).prefix(4)
    assert part.pairs == 4
    assert list(part.baseline["wall"]) == [1.0, 2.0, 3.0, 4.0]
    assert list(part.candidate["cpu"]) == [10.0, 20.0, 30.0, 40.0]
    series = part.series()
    assert series.values("baseline", "wall") == [1.0, 2.0, 3.0, 4.0]
    assert series.values("candidate", "wall") == [10.0, 20.0, 30.0, 40.0]
    first = [(s.side, s.position) for s in series.samples if s.pair_index in (0, 1)]
    assert first == [("baseline", 0), ("candidate", 1), ("candidate", 0), ("baseline", 1)]


def test_a_later_round_replays_its_pairs_in_abba_order_by_their_place_in_the_stream() -> None:
    base = [float(i) for i in range(1, 7)]
    series = _workload(base, _scaled(base, 10.0)).series(3, 2)
    assert series.values("baseline", "wall") == [4.0, 5.0]
    order = [(s.pair_index, s.side) for s in series.samples]
    assert order == [(3, "candidate"), (3, "baseline"), (4, "baseline"), (4, "candidate")]


def test_a_prefix_longer_than_the_stream_is_a_named_error() -> None:
    with pytest.raises(StreamError, match="has 6 pairs; cannot take 7"):
        _workload([1.0] * 6, [1.0] * 6).prefix(7)


def test_sides_of_different_lengths_are_a_named_error() -> None:
    with pytest.raises(StreamError, match="one value per pair"):
        _workload([1.0] * 6, [1.0] * 5)


def test_the_anchor_accepts_a_clear_win_at_25_pairs_and_ignores_the_rest(
    manifest: Manifest,
) -> None:
    base = _noise(1, 50, 0.01)
    # The first 25 pairs 20 % faster; the next 25 slower again, which the anchor never reads.
    cand = _scaled(base[:25], 0.8) + _scaled(base[25:], 1.2)
    outcome = anchor_rule(_trial(base, cand), manifest)
    assert (outcome.verdict, outcome.pairs) == ("accepted", 25)


def test_the_anchor_in_doubt_measures_25_more_and_decides_at_50(manifest: Manifest) -> None:
    base = _noise(2, 50, 0.01)
    # Nothing at 25 pairs; 30 % faster in pairs 26-50, so the pooled 50 read about 15 %.
    cand = base[:25] + _scaled(base[25:], 0.7)
    outcome = anchor_rule(_trial(base, cand), manifest)
    assert (outcome.verdict, outcome.pairs, outcome.looks) == ("accepted", 50, 2)


def test_the_anchor_rejects_a_clear_slowdown_at_25_pairs(manifest: Manifest) -> None:
    base = _noise(3, 50, 0.01)
    outcome = anchor_rule(_trial(base, _scaled(base, 1.1)), manifest)
    assert (outcome.verdict, outcome.pairs) == ("rejected", 25)


def test_one_huge_outlier_fools_mann_whitney_but_not_welch(manifest: Manifest) -> None:
    base = _noise(4, 50, 0.005)
    # 24 pairs 5 % faster and one run ten times slower, twice over: the mean is 31 % worse,
    # the ranks say faster; Welch sees the variance and says neither.
    half = [*_scaled(base[:24], 0.95), 10.0]
    cand = [*half, *_scaled(base[25:49], 0.95), 10.0]
    stream = _trial(base, cand)
    mwu = mwu_rule(stream, manifest)
    anchor = anchor_rule(stream, manifest)
    assert (mwu.verdict, mwu.pairs) == ("rejected", 25)
    assert (anchor.verdict, anchor.pairs) == ("inconclusive", 50)


def test_the_mann_whitney_rule_accepts_a_clear_win_from_25_pairs_alone(manifest: Manifest) -> None:
    base = _noise(5, 50, 0.01)
    cand = _scaled(base[:25], 0.9) + _scaled(base[25:], 3.0)
    outcome = mwu_rule(_trial(base, cand), manifest)
    assert (outcome.verdict, outcome.pairs) == ("accepted", 25)


def test_the_sequential_rule_stops_a_clear_win_at_the_first_look(manifest: Manifest) -> None:
    base = _noise(6, 50, 0.005)
    outcome = sequential_rule(SCHEDULE)(_trial(base, _scaled(base, 0.8)), manifest)
    assert (outcome.verdict, outcome.pairs, outcome.looks) == ("accepted", 10, 1)


def test_the_sequential_rule_gives_up_early_on_a_quiet_a_a_stream(manifest: Manifest) -> None:
    base = _noise(7, 50, 0.005)
    # Pairs whose runs differ by 0.2 % at most: an interval far inside (-2 %, +3 %) at look 1.
    cand = [b * (1.0 + 0.002 * ((-1) ** i)) for i, b in enumerate(base)]
    outcome = sequential_rule(SCHEDULE)(_trial(base, cand, "a/a"), manifest)
    assert (outcome.verdict, outcome.pairs) == ("inconclusive", 10)


def test_the_sequential_rule_asks_for_more_pairs_than_a_short_stream_holds(
    manifest: Manifest,
) -> None:
    # A noisy 3 % win that 30 pairs cannot settle.
    stream = _trial(_noise(8, 30, 0.05), _scaled(_noise(108, 30, 0.05), 0.97))
    with pytest.raises(StreamError, match="has 30 pairs; cannot take pairs 30 to 39"):
        sequential_rule(SCHEDULE)(stream, manifest)
    # The fixed rules read 25 pairs at least.
    assert not decided(stream.prefix(20), manifest, rules_for(manifest))


def test_a_stream_is_long_enough_once_every_rule_has_decided_within_it(
    manifest: Manifest,
) -> None:
    base = _noise(10, 50, 0.005)
    assert decided(_trial(base, _scaled(base, 0.8)), manifest, rules_for(manifest))


def test_verifys_rule_reads_only_the_four_percent_wins(manifest: Manifest) -> None:
    base = _noise(11, 50, 0.005)
    verify = rules_for(manifest)["(d) speedproof verify"]
    four = TrialStream("win 4 %#0", "win", 4.0, (_workload(base, _scaled(base, 0.8)),))
    assert verify(four, manifest).verdict == "accepted"
    assert verify(_trial(base, _scaled(base, 0.8)), manifest).verdict == NOT_APPLIED


def test_the_table_counts_false_accepts_on_a_a_and_every_reject_as_false(
    manifest: Manifest,
) -> None:
    base = _noise(9, 50, 0.005)
    streams = [
        _trial(base, _scaled(base, 0.8), "a/a"),  # an A/A that reads a win: a false accept
        _trial(base, _scaled(base, 1.1)),  # a known win that reads a slowdown: a false reject
    ]
    table = evaluate(streams, manifest, rules_for(manifest))
    for name, cells in table.items():
        if name == "(d) speedproof verify":
            assert cells["a/a"].trials == cells["win 10 %"].trials == 0
            continue
        assert (cells["a/a"].accepted, cells["a/a"].false_accepts) == (1, 1)
        assert (cells["win 10 %"].rejected, cells["win 10 %"].false_rejects) == (1, 1)
        assert cells["win 10 %"].false_accepts == 0


def test_a_record_that_ends_before_a_rule_decides_is_left_out_of_its_counts_and_named(
    manifest: Manifest,
) -> None:
    # A noisy 3 % win of 30 pairs labelled 4 %: the fixed rules decide within it, `verify`'s
    # rule (no early stop, and 10 ms runs leave its budget room for 400 pairs) would need more,
    # as a newer rule can on a record made under an older one.
    def four(baseline: list[float], candidate: list[float]) -> TrialStream:
        ms = _workload(_scaled(baseline, 0.01), _scaled(candidate, 0.01))
        return TrialStream("win 4 %#0", "win", 4.0, (ms,))

    short = four(_noise(8, 30, 0.05), _scaled(_noise(108, 30, 0.05), 0.97))
    settled = four(_noise(10, 50, 0.005), _scaled(_noise(10, 50, 0.005), 0.8))
    table = evaluate([short, settled], manifest, rules_for(manifest))
    verify = table["(d) speedproof verify"]["win 4 %"]
    assert (verify.trials, verify.short, verify.accepted) == (1, 1, 1)
    assert table["(b) anchor welch 25(+25)"]["win 4 %"].short == 0
    lines = markdown(table, "(b) anchor welch 25(+25)")
    assert "(d) speedproof verify, win 4 %: 1 trial(s) left out" in lines[-1]


def test_a_recorded_trial_line_reads_back_as_the_same_stream() -> None:
    entry: dict[str, Any] = {
        "baseline": {"wall": [1.0, 2.0], "cpu": [0.5, 1.5], "memory": [10, 11]},
        "candidate": {"wall": [0.9, 1.9], "cpu": [0.4, 1.4], "memory": [10, 12]},
        "contended": True,
    }
    line: dict[str, Any] = {
        "trial": "win 5 %#3",
        "kind": "win",
        "win_pct": 5.0,
        "workloads": {"w": entry},
    }
    stream = stream_from_json(line)
    assert stream.label == "win 5 %"
    assert stream.contended
    assert list(stream.workloads[0].candidate["memory"]) == [10.0, 12.0]
    del entry["contended"]
    with pytest.raises(StreamError, match="malformed"):
        stream_from_json(line)


def test_the_measured_size_of_each_kind_of_trial_is_the_median_over_its_trials() -> None:
    # Three "10 %" trials whose median pairs read 12 %, 8 % and 6 % faster (the last despite two
    # slowed pairs): the median over trials of each trial's median pair ratio, -8 %.
    base = [1.0] * 5
    trials = [
        _trial(base, _scaled(base, 0.88)),
        _trial(base, _scaled(base, 0.92)),
        _trial(base, [0.94, 0.94, 0.94, 1.5, 1.5]),
        _trial(base, _scaled(base, 1.0), kind="a/a"),
    ]
    found = realized_wins(trials)
    assert list(found) == ["win 10 %", "a/a"]
    assert found["win 10 %"] == pytest.approx(-8.0)
    assert found["a/a"] == pytest.approx(0.0)


def test_the_predicted_acceptance_uses_the_a_a_streams_noise_and_each_kinds_measured_size() -> None:
    # Twenty A/A streams of 8 % noise; a "win" kind whose pairs all read 6 % faster.
    base = [1.0] * 50
    aa = [_trial(base, _noise(seed, 50, 0.08), kind="a/a") for seed in range(20)]
    wins = [_trial(base, _scaled(base, 0.94)) for _ in range(3)]
    sd, predicted = predicted_acceptance([*aa, *wins], SCHEDULE)
    assert 0.05 < sd < 0.09  # winsorized: the tails of a normal sample are pulled in
    (change, probability) = predicted["win 10 %"]
    assert change == pytest.approx(-6.0)
    assert probability == pytest.approx(acceptance_probability(6.0, sd, SCHEDULE))
    assert "a/a" not in predicted  # no change, nothing to accept
    assert predicted_acceptance(wins, SCHEDULE) == (pytest.approx(float("nan"), nan_ok=True), {})
