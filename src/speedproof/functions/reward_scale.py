"""The reward scale of function mode: every correct answer outranks every wrong one.

    wrong (another result, an exception, a time-out, a memory or output limit, outside the
    subset, a patch that does not apply or changes nothing, no patch at all)   WRONG_REWARD, -1.0
    correct, not min_ratio faster    0.5 * (ratio - 1) when slower, else 0.0: in (-0.5, 0]
    correct and min_ratio faster     log(ratio), at least log(1.01) ~ 0.00995
    not judged (sandbox or tool failure, unstable counts)   None

`ratio` is ref_Ir / cand_Ir on the counts the verifier charges (ADR 0065). A trainer that
normalises rewards within a group (GRPO) then ranks a correct answer, however slow, above any
wrong one: with 0.0 for a wrong answer and log(ratio) for a slower correct one, a wrong answer
outranked a correct one 2 % slower (-0.02), and an endless loop outranked both.
"""

from __future__ import annotations

import math

WRONG_REWARD = -1.0
# A correct answer that is not faster stays above this bound however slow it is: a 100x slower
# one scores -0.495, halfway between a wrong answer and a tie.
SLOWER_BOUND = -0.5


def correct_reward(ratio: float, min_ratio: float) -> float:
    """The reward of a correct answer whose charged counts give `ratio` = ref_Ir / cand_Ir."""
    if not ratio > 0 or not math.isfinite(ratio):
        raise ValueError(f"an instruction-count ratio must be positive and finite, not {ratio}")
    if ratio >= min_ratio:
        return math.log(ratio)
    # Linear in the ratio, so a 2x slower answer (-0.25) scores below a 1.1x slower one (-0.045)
    # and nothing correct reaches -0.5.
    return min(0.0, -SLOWER_BOUND * (ratio - 1.0))
