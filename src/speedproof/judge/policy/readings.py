"""The readings the policy's steps share: which readings carry a figure, and their interval ends.

Pure like `decide.py`: it imports only `speedproof.judge.policy.evidence` and the standard
library's pure parts (tests/judge/policy/test_policy.py enforces the allow-list for every policy
module).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from speedproof.judge.policy.evidence import Comparison, Evidence, PolicyRules

# The same floor as `speedproof.stats.MIN_SAMPLES`; repeated because the policy must not import
# scipy. Below it no test was run, so a reading cannot be representative evidence.
MIN_SAMPLES = 4


def primary_readings(evidence: Evidence, rules: PolicyRules, tier: str) -> Iterator[Comparison]:
    """Primary-metric readings of one tier with a figure: exact, or enough pairs to test."""
    for c in evidence.comparisons:
        if (
            c.metric == rules.primary_metric
            and c.tier == tier
            and (c.exact or c.n >= MIN_SAMPLES)
            and math.isfinite(c.delta_pct)
        ):
            yield c


def best_end(c: Comparison) -> float:
    """The most favourable improvement the reading's interval allows, in %."""
    return -c.ci_low_pct if c.lower_is_better else c.ci_high_pct


def worst_end(c: Comparison) -> float:
    """The least favourable improvement the reading's interval allows (negative is worse)."""
    return -c.ci_high_pct if c.lower_is_better else c.ci_low_pct


def interval(c: Comparison) -> str:
    return f"interval [{c.ci_low_pct:+.2f}%, {c.ci_high_pct:+.2f}%]"
