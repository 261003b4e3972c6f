"""Measuring in rounds and stopping as soon as the verdict is certain, without a peeking bias.

A judge that measures 10 pairs, tests, and measures 10 more when the answer is unclear tests up
to five times. Each fixed-horizon test at 0.05 is honest alone; five looks at one growing series
are not: over simulated A/A streams a paired t at 0.05 at 10, 20, 30, 40 and 50 pairs calls
13-16 % of them significant at some look (ADR 0020), three times the 5 % each figure claims.

The rule here is alpha spending with a union bound. A spending function f(t) = alpha × t^rho,
t = pairs so far / maximum pairs, gives look k the level alpha_k = f(t_k) - f(t_{k-1}); the levels
sum to alpha. Look k tests, and builds its interval, at alpha_k. The chance that any look falsely
declares significance is at most the sum of the per-look chances, alpha, whatever the correlation
between looks (they share pairs, so it is strong), and for the same reason the per-look
(1 - alpha_k) intervals hold the true change at every look at once with probability at least
1 - alpha: a confidence sequence. The guarantee does not depend on how many looks are taken, so
stopping early, for any reason, keeps it. Measured: 1.9-3.6 % of A/A streams are significant at
some look when every look is taken, for a nominal 5 %.

Why not an exact group-sequential boundary, an mSPRT or a martingale confidence sequence: the
union bound needs no model of the correlation between looks and nothing beyond what each fixed
test already assumes, so the per-look test can stay the trimmed t AND signed-rank rule of
`speedproof.stats.paired`, which no boundary computed for a single z statistic describes. An
mSPRT needs a mixing distribution for the effect and a known noise scale, which a 10-pair round
does not give; a confidence sequence valid at every single pair pays for 50 looks when the judge
takes 5. The price of the bound's slack (about 3 % spent of 5 %) is paid in pairs, not in wrong
verdicts.

Why rho = 1 (ADR 0026; ADR 0020 chose 1.5 from simulated normal noise): alpha × t spends the
level evenly, 0.01 a look, Pocock-like. rho = 3 (O'Brien-Fleming like) spends 0.0004 at 10 pairs,
below the smallest two-sided signed-rank p that 10 pairs can give (2 / 2^10 ≈ 0.00195), so its
first look can never accept or reject; rho = 2 spends 0.0020 there, which one workload reaches
only when all ten pairs agree. On normal simulated noise rho = 1.5 and 2 gained a few points of
power on the hardest 3 % cells; on 190 recorded streams of a real sandboxed run (heavy-tailed,
`benchmarks/measurement_rules.py --from-file`), rho = 1 settled 10 % wins in 14.0 pairs on
average against 15.7 at rho = 1.5, accepted as many 5 % wins (27 of 30) in 32.0 pairs against
33.7, and kept the 100 A/A streams at no false accept and no false reject.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

# The shape of the spending function alpha × t^rho; see the module docstring and ADR 0020.
DEFAULT_RHO = 1.0
# A round smaller than this could never be tested (see `speedproof.stats.unpaired.MIN_SAMPLES`).
MIN_ROUND_PAIRS = 4


@dataclass(frozen=True)
class Schedule:
    """Looks every `round_pairs` pairs up to `max_pairs`, spending `alpha` as alpha × t^rho."""

    round_pairs: int = 10
    max_pairs: int = 50
    alpha: float = 0.05
    rho: float = DEFAULT_RHO
    # Seconds of timed runs (both sides of every pair) one workload may take; None: no budget.
    # A schedule with a budget is sized by `within_budget` once the first round has shown what
    # a pair costs, and `max_pairs` is then only its cap (docs/adr/0042).
    budget_s: float | None = None
    # Whether the rule may end before its last look once no outcome is within reach
    # (`measure.resolution.beyond_budget`). Stopping early never spends alpha, so either way
    # the error rates hold; `verify` turns it off to give a claim every pair its budget allows.
    stops_early: bool = True
    # The look the measuring budget made the last one (`ending_at`); None: the plan's last look.
    last_look: int | None = None

    def __post_init__(self) -> None:
        if self.round_pairs < MIN_ROUND_PAIRS:
            raise ValueError(
                f"a round needs at least {MIN_ROUND_PAIRS} pairs, got {self.round_pairs}"
            )
        if self.max_pairs < self.round_pairs:
            raise ValueError(
                f"max_pairs ({self.max_pairs}) must be at least round_pairs ({self.round_pairs})"
            )
        if not 0.0 < self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5), got {self.alpha!r}")
        if not (math.isfinite(self.rho) and self.rho > 0.0):
            raise ValueError(f"rho must be a positive number, got {self.rho!r}")
        if self.budget_s is not None and not (math.isfinite(self.budget_s) and self.budget_s > 0):
            raise ValueError(f"a time budget must be a positive number, got {self.budget_s!r}")
        if self.last_look is not None and not 1 <= self.last_look <= self.planned_looks():
            raise ValueError(
                f"the last look must lie in 1..{self.planned_looks()}, got {self.last_look!r}"
            )

    def within_budget(self, pair_s: float) -> Schedule:
        """The schedule whose last look is the pairs that fit the budget at `pair_s` seconds a
        pair: whole rounds, at least one, at most `max_pairs`. Without a budget, itself.

        Sized before the first look is tested, from the pairs' timings alone, so the level each
        look spends is fixed before any test sees the difference the pairs measure.
        """
        if self.budget_s is None:
            return self
        fits = self.max_pairs if pair_s <= 0 else int(self.budget_s / pair_s)
        if fits >= self.max_pairs:
            return replace(self, budget_s=None)
        return replace(
            self, max_pairs=max(1, fits // self.round_pairs) * self.round_pairs, budget_s=None
        )

    @classmethod
    def fixed(cls, pairs: int, alpha: float = 0.05) -> Schedule:
        """One look at `pairs` pairs spending all of `alpha`: the fixed-horizon test."""
        return cls(round_pairs=pairs, max_pairs=pairs, alpha=alpha)

    def ending_at(self, look: int) -> Schedule:
        """This schedule ended at `look` by something other than the plan (the time budget ran
        out): the looks before keep the levels they were tested at, and `look` spends all the
        alpha they left, alpha - f(t_{look-1}). The union bound still sums to alpha, provided
        the choice of `look` does not depend on the differences the tests read: the judge ends
        a schedule from what its pairs cost in time, never from what they showed (ADR 0059)."""
        self._check(look)
        return replace(self, last_look=look)

    def planned_looks(self) -> int:
        """The looks up to `max_pairs`, whether or not the schedule was ended before them."""
        return -(-self.max_pairs // self.round_pairs)

    def looks(self) -> int:
        return self.planned_looks() if self.last_look is None else self.last_look

    def pairs_at(self, look: int) -> int:
        """Pairs measured at `look` (1-based); the last look is `max_pairs` even off the grid."""
        self._check(look)
        return min(look * self.round_pairs, self.max_pairs)

    def spent_at(self, look: int) -> float:
        """f(t_k): the alpha spent by looks 1..k together (0 before the first look)."""
        if look == 0:
            return 0.0
        self._check(look)
        if look == self.looks():
            return self.alpha  # exactly, not 1.0 ** rho times it after rounding
        return self.alpha * math.pow(self.pairs_at(look) / self.max_pairs, self.rho)

    def alpha_at(self, look: int) -> float:
        """The level of `look`'s test and of its (1 - level) interval."""
        return self.spent_at(look) - self.spent_at(look - 1)

    def look_of(self, pairs: int) -> int:
        """The look at which `pairs` pairs are measured; a `ValueError` off the schedule."""
        for look in range(1, self.looks() + 1):
            if self.pairs_at(look) == pairs:
                return look
        raise ValueError(
            f"{pairs} pairs is not a look of this schedule "
            f"({', '.join(str(self.pairs_at(k)) for k in range(1, self.looks() + 1))})"
        )

    def _check(self, look: int) -> None:
        if not 1 <= look <= self.looks():
            raise ValueError(f"look must lie in 1..{self.looks()}, got {look}")
