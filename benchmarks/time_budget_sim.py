"""The judge's sequential rule at several last looks, on simulated streams at this machine's noise.

Each stream is pairs of one 40 ms workload whose per-run log noise is Student's t with 4 degrees
of freedom (heavy tails, as on a shared machine), scaled so that the per-pair log ratios'
winsorized standard deviation is about 8.4 %, the median of the pinned 190-trial record of
docs/adr/0027 (8.5 %). The candidate is 0 % (A/A), 3, 4, 5 or 10 % faster. Every stream goes
through the judge's own loop, `SequentialRule` fed by `RecordedPairs`, with the default policy
(floor 3 %, limit 2 %) and a last look of H pairs (`Schedule(max_pairs=H)`), the early stop of
`measure.resolution.beyond_budget` included. H = 50 is the schedule before the time budget; the
default budget (20 s of timed runs a workload) gives H = 200 on such a workload, and `verify`'s
twice that, H = 400.

Prints one Markdown row per H: A/A false accepts and rejects, and for each win the share
accepted and the mean pairs used. No assertions; the figures are for docs/adr/0042.

    .venv/bin/python benchmarks/time_budget_sim.py [--streams 40] [--horizons 50,100,150,200,400]
        [--seed 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from sequential_sim import SIM_MANIFEST as MANIFEST
from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.stats import Schedule

WINS_PCT = (0.0, 3.0, 4.0, 5.0, 10.0)
# Per-run scale of the t(4) noise: t(4) has variance 2, and a pair's log ratio is the difference
# of two runs; 0.12 / 2 per run gave a median winsorized sd of 8.4 % per pair over 200 A/A
# streams of 50 pairs.
RUN_SCALE = 0.12 / 2.0
RUN_S = 0.04


def stream(rng: np.random.Generator, pairs: int, win_pct: float) -> RecordedWorkload:
    noise = rng.standard_t(4, (2, pairs)) * RUN_SCALE
    base = RUN_S * np.exp(noise[0])
    cand = RUN_S * (1.0 - win_pct / 100.0) * np.exp(noise[1])
    return RecordedWorkload.of_wall("sim", [float(x) for x in base], [float(x) for x in cand])


def judge(recorded: RecordedWorkload, horizon: int) -> tuple[str, int]:
    schedule = Schedule(round_pairs=10, max_pairs=horizon)
    rule = SequentialRule(MANIFEST, schedule, source=RecordedPairs({"sim": recorded}))
    verdict = decide(rule.run(), MANIFEST.rules()).verdict
    return verdict, schedule.pairs_at(rule.state.look)


def row(horizon: int, streams: int, seed: int) -> list[str]:
    cells = [str(horizon)]
    for index, win in enumerate(WINS_PCT):
        rng = np.random.default_rng([seed, index])
        count = 2 * streams if win == 0.0 else streams
        found = [judge(stream(rng, horizon, win), horizon) for _ in range(count)]
        accepted = sum(v == "accepted" for v, _ in found)
        pairs = statistics.fmean(p for _, p in found)
        if win == 0.0:
            rejected = sum(v == "rejected" for v, _ in found)
            cells += [f"{accepted}/{count}", f"{rejected}/{count}", f"{pairs:.0f}"]
        else:
            cells += [f"{accepted}/{count}", f"{pairs:.0f}"]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=40, help="streams per win (A/A: twice)")
    parser.add_argument("--horizons", default="50,100,150,200,400")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    head = ["last look H", "A/A false acc", "A/A false rej", "A/A pairs"]
    for win in WINS_PCT[1:]:
        head += [f"{win:g} % acc", "pairs"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    started = time.perf_counter()
    for horizon in (int(h) for h in args.horizons.split(",")):
        print("| " + " | ".join(row(horizon, args.streams, args.seed)) + " |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s; noise scale {RUN_SCALE:g} a run (t4)")


if __name__ == "__main__":
    main()
