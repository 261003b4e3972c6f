"""What a case's contract costs a verification: the same cases, with and without their contract.

    python benchmarks/fn_contract_cost.py [--families N] [--seed 5]

For one case of each of the first N families (a fixed sample: the first template of the split
each family is evaluated on, rendered from a fixed seed), the family's known-fast source is
verified twice, in alternating order: once against the case as corpus v2 judged it (edge,
random and benchmark inputs) and once with its contract (the same, plus the contract draws:
every length 0..100, sizes up to 4,096, extremes, floats where allowed). The verifier's
in-process cache of reference counts is emptied before each run, so neither side reuses the
other's Cachegrind runs. Prints the wall time per case and in total; on a shared machine it
moves with the load, which is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from speedproof.corpus.families import FAMILIES
from speedproof.corpus.generate import TrustedPair, _render
from speedproof.functions import instruction_cost as measure
from speedproof.functions.case import Case
from speedproof.functions.verifier import verify_candidate


def sample(families: int) -> list[TrustedPair]:
    pairs = []
    for family in FAMILIES[:families]:
        template = next(t for t in family.templates if t.role in ("dev", "frozen_heldout"))
        rng = random.Random(f"contract-cost:{family.name}")
        pairs.append(_render(family, template, template.role, rng, 0))
    return pairs


def _timed(case: Case, source: str, seed: int) -> tuple[float, str]:
    measure._CACHE.clear()
    measure._CALIBRATIONS.clear()
    started = time.monotonic()
    result = verify_candidate(case, source, seed=seed)
    return time.monotonic() - started, result.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=int, default=len(FAMILIES))
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    totals = {"without": 0.0, "with": 0.0}
    for number, pair in enumerate(sample(args.families)):
        sides = {"without": pair.case.model_copy(update={"contract": None}), "with": pair.case}
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        walls: dict[str, float] = {}
        statuses = []
        for name in order:
            walls[name], status = _timed(sides[name], pair.fast_source, args.seed)
            totals[name] += walls[name]
            statuses.append(status)
        print(
            f"{pair.case.template:<42} without {walls['without']:6.1f} s, "
            f"with {walls['with']:6.1f} s  {statuses}",
            flush=True,
        )
    growth = totals["with"] / totals["without"] - 1
    print(
        f"total: without the contract {totals['without']:.1f} s, with it {totals['with']:.1f} s "
        f"({growth:+.0%}); load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
