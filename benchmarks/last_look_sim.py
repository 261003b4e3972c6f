"""A last look the time budget ends: accepts with the alpha left against the plan's share.

Each stream is pairs of one workload whose runs take 0.1 s, then ten times as long from pair 10
on (a machine that got slower), with normal log noise of 12 % a run. A 20 s budget sizes the
plan from the first round at about 100 pairs, ten looks; after look 2 the budget is spent, so the
rule makes look 2 the last (`Schedule.ending_at`). For every stream the verdict is taken twice
on the same pairs: at the alpha the looks before left (the rule), and at the plan's share of
alpha for look 2 (as before docs/adr/0059). Streams through `SequentialRule` fed by
`RecordedPairs`, the judge's own loop, with the default policy (floor 3 %, limit 2 %).

Prints one line per candidate ratio: series, how many the budget ended, accepts both ways.
No assertions; the figures are for docs/adr/0059.

    .venv/bin/python benchmarks/last_look_sim.py [--series 300] [--ratios 1.0,0.91,0.85]
        [--seed 20000]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from sequential_sim import SIM_MANIFEST as MANIFEST
from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.stats import Schedule

BUDGET = Schedule(round_pairs=10, max_pairs=200, budget_s=20.0)
PAIRS = 30


def slowing(ratio: float, seed: int, workload: str) -> RecordedWorkload:
    rng = np.random.default_rng(seed)
    scale = np.where(np.arange(PAIRS) < 10, 0.1, 1.0)
    base = scale * np.exp(rng.normal(0.0, 0.12, PAIRS))
    cand = scale * ratio * np.exp(rng.normal(0.0, 0.12, PAIRS))
    return RecordedWorkload.of_wall(workload, [float(x) for x in base], [float(x) for x in cand])


def score(ratio: float, series: int, seed: int) -> str:
    (workload,) = (w.id for w in MANIFEST.workloads if w.tier == "representative")
    rules = MANIFEST.rules()
    ended = left = planned = 0
    for index in range(series):
        streams = {workload: slowing(ratio, seed + index, workload)}
        rule = SequentialRule(MANIFEST, BUDGET, source=RecordedPairs(streams))
        accepted = decide(rule.run(), rules).verdict == "accepted"
        left += accepted
        if rule.schedule.last_look is None:
            planned += accepted
            continue
        ended += 1
        plan = replace(rule, schedule=replace(rule.schedule, last_look=None))
        planned += decide(plan.evidence(), rules).verdict == "accepted"
    return (
        f"ratio {ratio:g}: {series} series, {ended} ended by the budget; accepted with the alpha "
        f"left {left} ({left / series:.2%}), at the plan's level {planned} ({planned / series:.2%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=300)
    parser.add_argument("--ratios", default="1.0,0.91,0.85")
    parser.add_argument("--seed", type=int, default=20_000)
    args = parser.parse_args()
    for ratio in (float(r) for r in args.ratios.split(",")):
        print(score(ratio, args.series, args.seed), flush=True)


if __name__ == "__main__":
    main()
