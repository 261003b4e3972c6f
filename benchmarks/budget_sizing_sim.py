"""The time budget sized to the noise against the fixed 20 s a workload, on simulated 1 s pairs.

    .venv/bin/python benchmarks/budget_sizing_sim.py

Streams of a 1 s workload at 5.4 % noise a run (7.6 % a pair, what sqlparse read), replayed
through the judge's own sequential rule (`SequentialRule`, `RecordedPairs`) with the toy
manifest's default policy, once with `max_total_measure_s` at its default and once at 0 (the
budget `max_measure_s` alone): verdicts of 10 % and 5 % wins and of no change, and the pairs
used. Prints one line per cell.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from support.sequential import manifest, per_workload_budget


def slow(n: int, cv: float, ratio: float, seed: int) -> RecordedWorkload:
    rng = np.random.default_rng(seed)
    base = np.exp(rng.normal(0.0, cv, n))
    cand = ratio * np.exp(rng.normal(0.0, cv, n))
    return RecordedWorkload.of_wall("parse", [float(x) for x in base], [float(x) for x in cand])


def main() -> None:
    for name, found in (("sized", manifest()), ("20 s only", per_workload_budget())):
        for ratio, trials in ((0.9, 100), (0.95, 100), (1.0, 400)):
            counts = {"accepted": 0, "rejected": 0, "inconclusive": 0}
            pairs = []
            for seed in range(trials):
                source = RecordedPairs({"parse": slow(200, 0.054, ratio, seed + 1000)})
                rule = SequentialRule(found, schedule_for(found), source=source)
                evidence = rule.run()
                counts[decide(evidence, found.rules()).verdict] += 1
                pairs.append(next(c.n for c in evidence.comparisons if c.metric == "wall"))
            print(
                f"{name}: candidate/baseline {ratio}: {counts}, median pairs "
                f"{int(np.median(pairs))}, max {max(pairs)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
