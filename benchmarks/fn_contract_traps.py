"""Fast candidates wrong only outside corpus v2's draws: what each one earns, one case per class.

    python benchmarks/fn_contract_traps.py [CLASS ...]

Each class of `corpus.traps.FAST_TRAPS_BY_CLASS` is built from the known-fast source of the first
dev case of the family it was paid on (the generator's pairs for seed 7, the default sizes),
verified with seed 2, and its status and reward printed; then the number of seeds among 0-99 whose
verification inputs hold a first list whose length is 53 modulo 89. Run against the tree before
contracts (`git archive` of it, with this file and `corpus/traps.py` copied in, on PYTHONPATH) it
shows what v2 paid; against the current tree, that nothing is paid (docs/adr/0066).
"""

from __future__ import annotations

import sys
import time

from speedproof.corpus.generate import GenerationConfig, build_pairs
from speedproof.corpus.traps import FAST_TRAPS_BY_CLASS
from speedproof.functions.case import verification_inputs
from speedproof.functions.verifier import verify_candidate

PAID_ON = {
    "clamps-bounds-at-the-end": "prefix_range_query",
    "garbage-from-4096-items": "distinct_cardinality",
    "raises-past-4096-items": "complement_lookup",
    "table-for-values-within-2000": "hash_membership",
    "garbage-when-the-first-item-is-big": "running_aggregate",
    "drops-float-items": "hash_membership",
    "wrong-on-one-length-residue": "stable_dedup",
}


def main() -> None:
    chosen = sys.argv[1:] or list(PAID_ON)
    dev = [pair for pair in build_pairs(GenerationConfig()) if pair.split == "dev"]
    for kind in chosen:
        trap = FAST_TRAPS_BY_CLASS[kind]
        pair = next(
            p
            for p in dev
            if p.case.family == PAID_ON[kind] and trap(p.case, p.fast_source) is not None
        )
        source = trap(pair.case, pair.fast_source)
        assert source is not None
        started = time.monotonic()
        result = verify_candidate(pair.case, source, seed=2)
        print(
            f"{kind:<36} {pair.case.id:<46} {result.status:<16} reward {result.reward} "
            f"({time.monotonic() - started:.0f} s)",
            flush=True,
        )
    case = next(p.case for p in dev if p.case.family == "stable_dedup")
    hits = sum(
        any(len(args[0]) % 89 == 53 for args in verification_inputs(case, seed, 64).values)
        for seed in range(100)
    )
    print(f"len(xs) % 89 == 53 among the inputs of {hits} of 100 seeds ({case.id})")


if __name__ == "__main__":
    main()
