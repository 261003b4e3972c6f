"""Input adequacy per family: mutation kill rates and how many wrong candidates pass.

    python benchmarks/fn_adequacy.py [--corpus corpus/v2] [--splits dev,frozen_seen]
    python benchmarks/fn_adequacy.py --draw 2          # fresh cases from the families, ungated
    python benchmarks/fn_adequacy.py --verify-traps    # the named traps through the real verifier

Prints, per family: cases, cases below the adequacy bar, the mutation kill rate over all of the
family's mutants that are not presumed equivalent, the lowest case's kill rate, the generic traps
that matched the reference on a whole draw (in-process, `adequacy_traps.generic_traps`) and, with
`--verify-traps`, how many named traps (`corpus/traps.py`) earned anything from the real verifier
(passed, a positive reward, or no reward because it could not judge). The last two columns must
be 0, and every kill rate at least 95 %.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from speedproof.corpus.adequacy_audit import audit_cases, by_family
from speedproof.corpus.families import FAMILIES
from speedproof.corpus.generate import _render
from speedproof.corpus.literals import DEFAULT_CORPUS, SPLITS
from speedproof.corpus.splits import load_split
from speedproof.corpus.traps import TRAPS
from speedproof.functions.case import Case
from speedproof.functions.verifier import verify_candidate


def drawn_cases(per_template: int) -> list[Case]:
    """Fresh, ungated cases: `per_template` draws of every template of every family."""
    cases = []
    for family in FAMILIES:
        for template in family.templates:
            for index in range(per_template):
                rng = random.Random(f"adequacy:{family.name}:{template.id}:{index}")
                cases.append(_render(family, template, template.role, rng, index).case)
    return cases


def _case_trap_passes(case: Case, memorised: bool) -> tuple[str, int, int]:
    """(family, traps tried, traps that earned anything): `passed`, a positive reward, or no
    reward at all (a verdict the machine could not give is not a 0 either)."""
    earned = tried = 0
    for kind, build in TRAPS.items():
        if kind == "memorised-benchmarks" and not memorised:
            continue
        source = build(case)
        if source is None:
            continue
        tried += 1
        result = verify_candidate(case, source, seed=2)
        earned += result.status == "passed" or result.reward is None or result.reward > 0
    return case.family, tried, earned


def trap_passes(cases: Sequence[Case], workers: int) -> dict[str, tuple[int, int]]:
    """Per family: (named traps tried, traps the real verifier passed) at seed 2.

    The memorised-answers trap is right on the benchmark draw it was built from (seed 1) and
    otherwise runs the reference, so it is correct and goes through Cachegrind (about 15 s): it
    is tried on the first case of each family only; every other trap on every case.
    """
    firsts: set[str] = set()
    jobs = []
    for case in cases:
        jobs.append((case, case.family not in firsts))
        firsts.add(case.family)
    totals: dict[str, tuple[int, int]] = {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        for family, tried, passed in pool.map(_case_trap_passes, *zip(*jobs, strict=True)):
            old = totals.get(family, (0, 0))
            totals[family] = (old[0] + tried, old[1] + passed)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--draw", type=int, default=0, help="fresh cases per template instead")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--verify-traps", action="store_true")
    args = parser.parse_args()
    if args.draw:
        cases = drawn_cases(args.draw)
        where = f"{args.draw} fresh draw(s) per template"
    else:
        cases = [c for s in args.splits.split(",") for c in load_split(args.corpus, s)]
        where = f"{args.corpus} ({args.splits})"
    started = time.perf_counter()
    results = audit_cases(cases, workers=args.workers)
    elapsed = time.perf_counter() - started
    passes = trap_passes(cases, args.workers) if args.verify_traps else {}
    print(f"{len(cases)} cases from {where}; adequacy checked in {elapsed:.0f} s")
    print(
        f"{'family':24} {'cases':>5} {'below':>5} {'kill':>7} {'lowest':>7} {'traps':>5} "
        f"{'traps rewarded':>22}"
    )
    for name, entry in by_family(results).items():
        tried, passed = passes.get(name, (0, 0))
        verified = f"{passed} of {tried}" if args.verify_traps else "-"
        print(
            f"{name:24} {entry.cases:5} {entry.failing:5} {entry.kill_rate:7.1%} "
            f"{entry.lowest_kill_rate:7.1%} {entry.traps_passed:5} {verified:>22}"
        )
    for result in results:
        for shortfall in result.shortfalls:
            print(f"  {result.case_id}: {shortfall}")


if __name__ == "__main__":
    main()
