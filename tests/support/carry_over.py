"""Readings for the carry-over rule's tests: one workload's primary-metric reading with the win
and tier a test asks for (support.evidence holds them)."""

from __future__ import annotations

import numpy as np

from speedproof.judge.policy.evidence import Comparison, PolicyRules
from speedproof.stats import compare

# The manifest's defaults: a quarter on holdouts, half on a workload's own twin.
RULES = PolicyRules(carry_over_fraction=0.25, twin_carry_over_fraction=0.5)


def reading(
    workload: str,
    change_pct: float,
    *,
    tier: str,
    seed: int = 0,
    runs: int = 25,
    spread: float = 1.0,
) -> Comparison:
    """`runs` runs a side, `spread` % sd, the candidate's mean exactly `change_pct` off."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(runs)
    cand = rng.standard_normal(runs)
    base = 100.0 + spread * (base - base.mean()) / base.std(ddof=1)
    cand = 100.0 + change_pct + spread * (cand - cand.mean()) / cand.std(ddof=1)
    return compare(
        [float(x) for x in base],
        [float(x) for x in cand],
        workload=workload,
        metric="wall",
        tier=tier,
        limit_pct=RULES.guardrail_limit_pct,
    )
