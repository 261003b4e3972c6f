"""Decision rules for the timed lane, side by side on the same simulated paired streams.

Each stream is 50 ABBA pairs of one workload: log-normal run noise with the scenario's CV, an
optional drift shared by both runs of a pair (a random walk on the log scale), an optional heavy
tail (2 % of runs 30 % slower), and a candidate that is 0 % (A/A), 3 %, 5 % or 10 % faster. The
rules, with the policy defaults floor 3 % and limit 2 %:

- seq rho=R: the judge's own loop, `SequentialRule` with `Schedule(rho=R)`, fed the stream
  through `RecordedPairs` (ADR 0020);
- welch 25+25: unpaired Welch p < 0.05 at 25 pairs, otherwise 25 more and the same at 50;
- mwu 25: Mann-Whitney p < 0.05 at 25 pairs, once;
- naive peek: a fixed-horizon paired t at 0.05 (and its 95 % interval for futility) at every
  look of the default schedule.

Prints one Markdown table (A/A false accepts and rejects; for each win the acceptance rate and
the median and mean pairs used) and the A/A rate of "significant at some look" when every look is
taken, then how the signed-rank test's zero rule behaves on page-granular memory. No
assertions; the figures go in docs/adr/0020-paired-sequential-statistics.md. About a minute of
CPU at the defaults (100 streams a cell, 500 for zero handling); `--streams 1000 --part rules`
(the ADR's figures) took 1012 s of wall time at load 3-9.

    .venv/bin/python benchmarks/sequential_sim.py [--streams N] [--seed S] [--rhos 1,2,3]
        [--part all|rules|zeros] [--zero-streams N]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Comparison
from speedproof.manifest_loading import parse_manifest
from speedproof.stats import Schedule, compare, paired_compare

FLOOR_PCT = 3.0
LIMIT_PCT = 2.0
MAX_PAIRS = 50
ROUND_PAIRS = 10
FIXED_PAIRS = 25
LEVEL = 0.05
WINS_PCT = (0.0, 3.0, 5.0, 10.0)
TAIL_SHARE = 0.02
TAIL_FACTOR = 1.30


@dataclass(frozen=True)
class Scenario:
    name: str
    cv: float
    drift: float = 0.0  # sd of the per-pair step of the shared log-scale random walk
    tail: bool = False


SCENARIOS = (
    Scenario("CV 2 %", 0.02),
    Scenario("CV 5 %", 0.05),
    Scenario("CV 8 %", 0.08),
    Scenario("CV 5 % + drift", 0.05, drift=0.03),
    Scenario("CV 5 % + tail", 0.05, tail=True),
    Scenario("CV 8 % + drift + tail", 0.08, drift=0.03, tail=True),
)


@dataclass(frozen=True)
class Outcome:
    decision: str  # "accept", "reject" or "inconclusive"
    pairs: int


class Stream:
    """One simulated series of pairs, and every reading already computed on it.

    The rules share readings (the naive rule's 95 % readings are also the ones the every-look
    count uses; Welch and Mann-Whitney come from the same unpaired reading), so each is computed
    once per stream.
    """

    def __init__(self, baseline: list[float], candidate: list[float]) -> None:
        self.baseline = baseline
        self.candidate = candidate
        self._paired: dict[tuple[int, float], Comparison] = {}
        self._unpaired: dict[int, Comparison] = {}

    def paired(self, pairs: int, alpha: float) -> Comparison:
        key = (pairs, alpha)
        if key not in self._paired:
            self._paired[key] = paired_compare(
                self.baseline[:pairs],
                self.candidate[:pairs],
                workload="sim",
                metric="wall",
                tier="representative",
                limit_pct=LIMIT_PCT,
                alpha=alpha,
            )
        return self._paired[key]

    def unpaired(self, pairs: int) -> Comparison:
        if pairs not in self._unpaired:
            self._unpaired[pairs] = compare(
                self.baseline[:pairs],
                self.candidate[:pairs],
                workload="sim",
                metric="wall",
                tier="representative",
                limit_pct=LIMIT_PCT,
            )
        return self._unpaired[pairs]


Rule = Callable[[Stream], Outcome]


def make_stream(rng: np.random.Generator, scenario: Scenario, win_pct: float) -> Stream:
    sigma = math.sqrt(math.log1p(scenario.cv**2))
    noise = np.exp(rng.normal(0.0, sigma, (2, MAX_PAIRS)))
    drift = np.exp(np.cumsum(rng.normal(0.0, scenario.drift, MAX_PAIRS)))
    if scenario.tail:
        noise *= np.where(rng.random((2, MAX_PAIRS)) < TAIL_SHARE, TAIL_FACTOR, 1.0)
    base = 0.1 * drift * noise[0]
    cand = 0.1 * (1.0 - win_pct / 100.0) * drift * noise[1]
    return Stream([float(x) for x in base], [float(x) for x in cand])


def _by_p(reading: Comparison, p: float | None) -> str | None:
    """Accept or reject when `p` < 0.05 and the estimate clears the floor or the limit."""
    if p is None or p >= LEVEL:
        return None
    if reading.improvement_pct >= FLOOR_PCT:
        return "accept"
    if reading.improvement_pct < -LIMIT_PCT:
        return "reject"
    return None


# The simulated target: one workload, wall time alone, the policy's default floor and limit.
SIM_MANIFEST = parse_manifest(
    f"""
[target]
name = "sim"
language = "command"
program = "true"

[tests]
runner = "command"
args = ["true"]

[[workloads]]
id = "sim"

[instructions]
enabled = false

[policy]
accept_floor_pct = {FLOOR_PCT}
guardrail_limit_pct = {LIMIT_PCT}
guardrails = []
""",
    "sim.toml",
)


def sequential(rho: float) -> Rule:
    """The judge's own loop (`SequentialRule`) on the simulated pairs."""
    schedule = Schedule(round_pairs=ROUND_PAIRS, max_pairs=MAX_PAIRS, rho=rho)

    def rule(stream: Stream) -> Outcome:
        recorded = RecordedWorkload.of_wall("sim", stream.baseline, stream.candidate)
        loop = SequentialRule(SIM_MANIFEST, schedule, source=RecordedPairs({"sim": recorded}))
        verdict = decide(loop.run(), SIM_MANIFEST.rules()).verdict
        said = {"accepted": "accept", "rejected": "reject"}.get(verdict, "inconclusive")
        return Outcome(said, schedule.pairs_at(loop.state.look))

    return rule


def welch_extended(stream: Stream) -> Outcome:
    for pairs in (FIXED_PAIRS, 2 * FIXED_PAIRS):
        reading = stream.unpaired(pairs)
        decision = _by_p(reading, reading.p_welch)
        if decision is not None:
            return Outcome(decision, pairs)
    return Outcome("inconclusive", 2 * FIXED_PAIRS)


def mwu_fixed(stream: Stream) -> Outcome:
    reading = stream.unpaired(FIXED_PAIRS)
    return Outcome(_by_p(reading, reading.p_mannwhitney) or "inconclusive", FIXED_PAIRS)


def naive_peek(stream: Stream) -> Outcome:
    pairs = 0
    for pairs in range(ROUND_PAIRS, MAX_PAIRS + 1, ROUND_PAIRS):
        reading = stream.paired(pairs, LEVEL)
        decision = _by_p(reading, dict(reading.extra)["p_paired_t"])
        if decision is not None:
            return Outcome(decision, pairs)
        if -reading.ci_low_pct < FLOOR_PCT and -reading.ci_high_pct > -LIMIT_PCT:
            return Outcome("inconclusive", pairs)
    return Outcome("inconclusive", pairs)


def any_look_significant(stream: Stream, schedules: Sequence[Schedule]) -> list[bool]:
    """For each schedule, then for naive peeking: significant at some look, every look taken."""
    readings = [stream.paired(n, LEVEL) for n in range(ROUND_PAIRS, MAX_PAIRS + 1, ROUND_PAIRS)]
    p_values = [(dict(r.extra)["p_paired_t"], r.p_value) for r in readings]
    hits = [
        any(p is not None and p < s.alpha_at(k + 1) for k, (_, p) in enumerate(p_values))
        for s in schedules
    ]
    return [*hits, any(t is not None and t < LEVEL for t, _ in p_values)]


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}"


def _cells(outcomes: dict[float, list[Outcome]]) -> list[str]:
    aa = outcomes[0.0]
    cells = [
        _pct(sum(o.decision == "accept" for o in aa), len(aa)),
        _pct(sum(o.decision == "reject" for o in aa), len(aa)),
        f"{statistics.fmean(o.pairs for o in aa):.1f}",
    ]
    for win in WINS_PCT[1:]:
        runs = outcomes[win]
        pairs = [o.pairs for o in runs]
        cells += [
            _pct(sum(o.decision == "accept" for o in runs), len(runs)),
            f"{statistics.median(pairs):g}",
            f"{statistics.fmean(pairs):.1f}",
        ]
    return cells


def _table_head() -> None:
    header = ["scenario", "rule", "A/A acc %", "A/A rej %", "A/A pairs"]
    for win in WINS_PCT[1:]:
        header += [f"{win:g} % acc %", "med", "mean"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))


def _scenario(
    s_index: int, streams_per_cell: int, seed: int, rules: dict[str, Rule], rhos: list[float]
) -> list[int]:
    """Print the scenario's rows; return its every-look A/A hit counts."""
    scenario = SCENARIOS[s_index]
    outcomes: dict[str, dict[float, list[Outcome]]] = {name: {} for name in rules}
    hits = [0] * (len(rhos) + 1)
    schedules = [Schedule(round_pairs=ROUND_PAIRS, max_pairs=MAX_PAIRS, rho=rho) for rho in rhos]
    for w_index, win in enumerate(WINS_PCT):
        # The same seed for every rule: they are compared on the same streams.
        rng = np.random.default_rng([seed, s_index, w_index])
        streams = [make_stream(rng, scenario, win) for _ in range(streams_per_cell)]
        for name, rule in rules.items():
            outcomes[name][win] = [rule(stream) for stream in streams]
        if win == 0.0:
            for stream in streams:
                said = any_look_significant(stream, schedules)
                hits = [h + int(s) for h, s in zip(hits, said, strict=True)]
    for name in rules:
        print("| " + " | ".join([scenario.name, name, *_cells(outcomes[name])]) + " |")
    return hits


def zero_handling(streams: int, seed: int) -> None:
    """Signed-rank zero handling on page-granular peak memory, where most pairs tie exactly.

    Each run reads 4096 KiB, or one 4 KiB page more with probability 20 % (A/A) or, for the
    candidate, 50 % (a small real increase); 25 pairs. Rates of p < 0.05 for the signed-rank
    test alone under each zero rule, and for `paired_compare` (t AND signed rank, zsplit).
    """
    rng = np.random.default_rng([seed, 99])
    print(f"\nzero handling, 25 pairs of page-granular memory, {streams} streams each\n")
    print("| reading | wilcox (drop zeros) | pratt | zsplit | paired_compare |")
    print("| --- | --- | --- | --- | --- |")
    for label, share in (("A/A", 0.2), ("candidate 30 points more often a page up", 0.5)):
        hits = [0, 0, 0, 0]
        for _ in range(streams):
            base = 4096.0 + 4.0 * (rng.random(25) < 0.2)
            cand = 4096.0 + 4.0 * (rng.random(25) < share)
            ratios = np.log(cand) - np.log(base)
            if np.any(ratios != 0.0):  # all zero: every rule says p = 1 or cannot run
                for i, rule in enumerate(("wilcox", "pratt", "zsplit")):
                    p = sps.wilcoxon(ratios, zero_method=rule, method="asymptotic").pvalue
                    hits[i] += bool(p < LEVEL)
            stream = Stream([float(x) for x in base], [float(x) for x in cand])
            hits[3] += stream.paired(25, LEVEL).significant
        print(f"| {label} | " + " | ".join(_pct(h, streams) for h in hits) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=100, help="streams per scenario and win")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--rhos", default="1,2,3", help="spending shapes alpha × t^rho to compare")
    parser.add_argument("--part", choices=("all", "rules", "zeros"), default="all")
    parser.add_argument("--zero-streams", type=int, default=500, help="streams per zero reading")
    args = parser.parse_args()
    if args.part == "zeros":
        zero_handling(args.zero_streams, args.seed)
        return
    rhos = [float(x) for x in args.rhos.split(",")]
    rules: dict[str, Rule] = {f"seq rho={rho:g}": sequential(rho) for rho in rhos}
    rules |= {"welch 25+25": welch_extended, "mwu 25": mwu_fixed, "naive peek": naive_peek}
    started = time.perf_counter()
    print(
        f"{args.streams} streams per cell, seed {args.seed}, floor {FLOOR_PCT:g} %, "
        f"limit {LIMIT_PCT:g} %, load {os.getloadavg()[0]:.2f} at start\n"
    )
    _table_head()
    any_look = {
        SCENARIOS[i].name: _scenario(i, args.streams, args.seed, rules, rhos)
        for i in range(len(SCENARIOS))
    }
    print("\nA/A, every look taken (10..50 pairs): % of streams significant at some look\n")
    names = [f"seq rho={rho:g}: p_value < alpha_k" for rho in rhos] + ["naive: paired t p < 0.05"]
    print("| scenario | " + " | ".join(names) + " |")
    print("|" + " --- |" * (len(names) + 1))
    for name, hits in any_look.items():
        print(f"| {name} | " + " | ".join(_pct(h, args.streams) for h in hits) + " |")
    if args.part == "all":
        zero_handling(args.zero_streams, args.seed)
    elapsed = time.perf_counter() - started
    print(f"\n{elapsed:.0f} s, load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
