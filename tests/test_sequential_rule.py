"""The one sequential rule, fed synthetic pairs whose answers are known.

`SequentialRule` is the loop the judge, `verify`, `calibrate` and every benchmark run; here its
pairs come from `RecordedPairs`, so each test knows exactly what the machine "measured".
"""

from __future__ import annotations

import numpy as np

from speedproof.evidence import Evidence
from speedproof.manifest import Manifest, parse_manifest
from speedproof.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.measure.sequential_rule import SequentialRule
from speedproof.policy import decide
from speedproof.stats import Schedule

MANIFEST = """
[target]
name = "toy"
language = "command"
program = "python3"

[tests]
runner = "command"
args = ["true"]

[[workloads]]
id = "parse"
args = ["prog.py"]

[instructions]
enabled = false
"""


def manifest() -> Manifest:
    return parse_manifest(MANIFEST, "speedproof.toml")


def stream(n: int, cv: float, ratio: float, seed: int) -> RecordedWorkload:
    rng = np.random.default_rng(seed)
    base = 0.1 * np.exp(rng.normal(0.0, cv, n))
    cand = 0.1 * ratio * np.exp(rng.normal(0.0, cv, n))
    return RecordedWorkload.of_wall("parse", [float(x) for x in base], [float(x) for x in cand])


def run(recorded: RecordedWorkload, schedule: Schedule) -> tuple[str, int, Evidence]:
    """(verdict, the look the rule stopped at, its evidence)."""
    rule = SequentialRule(manifest(), schedule, source=RecordedPairs({"parse": recorded}))
    evidence = rule.run()
    return decide(evidence, manifest().rules()).verdict, rule.state.look, evidence


def test_a_clear_win_is_accepted_at_the_first_look() -> None:
    # Ten pairs all 10 % faster: the exact signed-rank p is 2 / 2^10 ≈ 0.00195, under the first
    # look's 0.01 (with rho = 3 the first look's 0.0004 could never be reached).
    found = stream(50, 0.01, 0.90, seed=1)
    assert run(found, Schedule())[:2] == ("accepted", 1)
    verdict, look, _ = run(found, Schedule(rho=3.0))
    assert verdict == "accepted" and look > 1


def test_a_clear_slowdown_is_rejected_at_the_first_look() -> None:
    assert run(stream(50, 0.01, 1.10, seed=2), Schedule())[:2] == ("rejected", 1)


def test_a_quiet_no_change_stops_early_as_inconclusive() -> None:
    verdict, look, _ = run(stream(50, 0.01, 1.0, seed=4), Schedule())
    assert verdict == "inconclusive" and look <= 2


def test_a_significant_win_below_the_floor_stops_early_and_is_not_accepted() -> None:
    verdict, look, evidence = run(stream(50, 0.002, 0.99, seed=5), Schedule())
    wall = next(c for c in evidence.comparisons if c.metric == "wall")
    assert wall.significant and 0.5 < wall.improvement_pct < 1.5
    assert verdict == "inconclusive" and look < Schedule().looks()


def test_a_noisy_stream_goes_to_the_last_look_and_ends_inconclusive() -> None:
    verdict, look, evidence = run(stream(50, 0.10, 1.0, seed=6), Schedule())
    assert verdict == "inconclusive" and look == Schedule().looks()
    assert evidence.final


def test_a_reading_without_a_ratio_cannot_improve_with_more_pairs_and_stops_at_once() -> None:
    found = stream(50, 0.05, 0.8, seed=7)
    wall = list(found.candidate["wall"])
    wall[0] = 0.0
    broken = RecordedWorkload.of_wall("parse", list(found.baseline["wall"]), wall)
    assert run(broken, Schedule())[:2] == ("inconclusive", 1)


def test_a_rule_never_reads_past_the_pairs_of_its_last_look() -> None:
    # 30 pairs recorded, a 30-pair schedule: a stream one look longer would be needed to read on.
    verdict, look, evidence = run(stream(30, 0.10, 1.0, seed=6), Schedule(max_pairs=30))
    assert look == 3 and evidence.final and verdict == "inconclusive"
