"""Generation and verification throughput of the function-mode corpus.

    python benchmarks/corpus_generate.py [--train 16 --dev 8 --seen 8 --heldout 6] [--full]

Prints: pairs rendered per second (no verifier), pairs verified per second with a cold cache,
the same run again with a warm cache (every pair skipped), per-family verification time and the
share of pairs that passed. A pair that fails aborts generation, so "passed" is all-or-error.
`--full` uses the anchor's sizes (152/38/30/30); expect tens of minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from speedproof.corpus.cache import VerificationCache
from speedproof.corpus.generate import (
    DEFAULT_SIZES,
    GenerationConfig,
    TrustedPair,
    build_pairs,
    verify_pairs,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=int, default=16)
    parser.add_argument("--dev", type=int, default=8)
    parser.add_argument("--seen", type=int, default=8)
    parser.add_argument("--heldout", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()
    sizes = dict(DEFAULT_SIZES) if args.full else {
        "train": args.train, "dev": args.dev, "frozen_seen": args.seen,
        "frozen_heldout": args.heldout,
    }  # fmt: skip
    config = GenerationConfig(seed=args.seed, sizes=sizes, workers=args.workers)  # type: ignore[arg-type]

    started = time.perf_counter()
    pairs = build_pairs(config)
    render_s = time.perf_counter() - started
    print(f"rendered {len(pairs)} pairs in {render_s:.2f} s ({len(pairs) / render_s:.0f}/s)")

    per_family: dict[str, list[float]] = defaultdict(list)
    rewards: list[float] = []

    def progress(pair: TrustedPair, verdict: dict[str, Any], cached: bool) -> None:
        if not cached:
            per_family[pair.case.family].append(float(verdict.get("duration_s") or 0.0))
            rewards.append(float(verdict["reward"]))

    with tempfile.TemporaryDirectory() as tmp:
        cache = VerificationCache(Path(tmp) / "cache.jsonl")
        started = time.perf_counter()
        rows, stats = verify_pairs(pairs, config, cache, progress)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        _, warm_stats = verify_pairs(pairs, config, VerificationCache(Path(tmp) / "cache.jsonl"))
        warm = time.perf_counter() - started

    passed = sum(1 for r in rows if r.verification["status"] == "passed")
    print(
        f"verified {stats.verified} pairs in {cold:.1f} s with {args.workers} workers "
        f"({stats.verified / cold:.2f} pairs/s, {cold / max(1, stats.verified):.1f} s a pair)"
    )
    print(f"passed {passed}/{len(rows)} ({passed / len(rows):.0%})")
    print(f"warm cache: {warm_stats.cached} skipped, {warm_stats.verified} verified, {warm:.2f} s")
    print(
        f"reward log(ref_Ir/cand_Ir): median {statistics.median(rewards):.3f}, "
        f"min {min(rewards):.3f}, max {max(rewards):.3f}"
    )
    print("family                 pairs  mean s/pair")
    for family, times in sorted(per_family.items()):
        print(f"{family:22s} {len(times):5d}  {statistics.mean(times):8.1f}")


if __name__ == "__main__":
    main()
