"""Plain data that crosses from measurement to the policy: comparisons, evidence, verdicts.

Nothing here does I/O; `decide.py` imports only this module and the standard library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

VerdictName = Literal["accepted", "rejected", "inconclusive"]
Tier = Literal["representative", "plausible", "stress", "holdout"]
# A representative workload's twin is `<id>~twin`, of the holdout tier (docs/adr/0030); `~` is
# not allowed in a manifest id, so no twin id collides with one.
TWIN_SUFFIX = "~twin"


@dataclass(frozen=True)
class Comparison:
    """One metric on one workload: baseline against candidate.

    `delta_pct` is the raw relative change of the candidate's mean, (cand - base) / base * 100.
    `improvement_pct` turns it into "positive is better" using the metric's direction, so the
    policy never needs to know which metrics are lower-is-better.
    """

    workload: str
    metric: str
    tier: str
    n_baseline: int
    n_candidate: int
    baseline_mean: float
    candidate_mean: float
    delta_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float | None
    welch_t: float | None
    p_welch: float | None
    p_mannwhitney: float | None
    significant: bool
    supported: bool
    lower_is_better: bool = True
    lane: str = "timed"
    extra: tuple[tuple[str, float | None], ...] = ()
    # A deterministic reading (instruction counts, binary size): repeated runs gave identical
    # values, so one run a side is the whole truth and no test is needed. Such a reading is
    # `significant` exactly when the two sides differ.
    exact: bool = False
    # Why a figure is missing or degenerate, in words ("fewer than 4 samples a side", "the
    # baseline mean is 0, so no relative change exists"); empty when the figures are ordinary.
    note: str = ""

    @property
    def improvement_pct(self) -> float:
        return -self.delta_pct if self.lower_is_better else self.delta_pct

    @property
    def finite(self) -> bool:
        """True when the delta and both ends of its interval are real numbers."""
        return all(math.isfinite(x) for x in (self.delta_pct, self.ci_low_pct, self.ci_high_pct))

    @property
    def n(self) -> int:
        return min(self.n_baseline, self.n_candidate)

    def render(self) -> str:
        """The one way a figure is printed: `-6.70% (p=0.000 n=25)`, or `0 → 2 (p=0.000 n=10)`
        from a baseline mean of 0, where no percentage exists."""
        p = "n/a" if self.p_value is None else f"{self.p_value:.3f}"
        if math.isinf(self.delta_pct):
            return f"{self.baseline_mean:g} → {self.candidate_mean:g} (p={p} n={self.n})"
        return f"{self.delta_pct:+.2f}% (p={p} n={self.n})"


def exact_comparison(
    *,
    workload: str,
    metric: str,
    tier: str,
    lane: str,
    baseline: float,
    candidate: float,
    n_baseline: int = 1,
    n_candidate: int = 1,
    extra: tuple[tuple[str, float | None], ...] = (),
) -> Comparison:
    """A deterministic reading (binary size, repeated identical instruction counts): the change
    is the change, significant exactly when the sides differ, and always supported; the policy's
    limits decide whether it matters. A baseline of 0 has no relative change (NaN)."""
    delta = (candidate - baseline) / baseline * 100.0 if baseline else math.nan
    return Comparison(
        workload=workload,
        metric=metric,
        tier=tier,
        n_baseline=n_baseline,
        n_candidate=n_candidate,
        baseline_mean=float(baseline),
        candidate_mean=float(candidate),
        delta_pct=delta,
        ci_low_pct=delta,
        ci_high_pct=delta,
        p_value=None,
        welch_t=None,
        p_welch=None,
        p_mannwhitney=None,
        significant=candidate != baseline,
        supported=True,
        lane=lane,
        extra=extra,
        exact=True,
    )


@dataclass(frozen=True)
class PolicyRules:
    """The manifest's policy block, as the policy sees it."""

    primary_metric: str = "wall"
    accept_floor_pct: float = 3.0
    guardrail_limit_pct: float = 2.0
    guardrails: tuple[str, ...] = ("cpu", "memory")
    statistical_support_required: bool = True
    # Per-metric limits that replace `guardrail_limit_pct` (a reported metric's tolerance).
    limits: tuple[tuple[str, float], ...] = ()
    # The carry-over rule (docs/adr/0030, 0059, 0076): the share of a representative win that
    # must reappear on every holdout, the share a workload's own twin must keep, and the
    # workloads whose wins are exempt.
    carry_over_fraction: float = 0.0
    twin_carry_over_fraction: float = 0.0
    input_specific: tuple[str, ...] = ()

    def limit_for(self, metric: str) -> float:
        """How much worse than the baseline `metric` may read, in %."""
        return dict(self.limits).get(metric, self.guardrail_limit_pct)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The only input of the policy. There is deliberately no field for a reviewer's concern.

    Keyword-only: five leading fields of which four are booleans read wrong in any order but one.
    """

    behaviour_matches: bool
    failure_summary: tuple[str, ...]
    safety_checks_passed: bool
    representative_evidence: bool
    comparisons: tuple[Comparison, ...]
    behaviour_detail: tuple[str, ...] = ()
    safety_detail: tuple[str, ...] = ()
    # Which look of the sequential schedule this evidence comes from (1-based), whether it is the
    # last one allowed, and the level every `significant` in `comparisons` was decided at
    # (the look's share of the error budget, after Holm across workloads).
    look: int = 1
    final: bool = True
    alpha: float = 0.05
    # How many looks in a row just before this one would have accepted (`policy.accepts_at`):
    # an accept resting on less than twice the floor must hold at two consecutive looks.
    earlier_accepts: int = 0
    # The same for rejects (`policy.rejects_at`): a reject resting on a worsening of less than
    # twice its limit must hold at two consecutive looks too.
    earlier_rejects: int = 0
    # Said of the measurement, not of the candidate (a contended machine, an unstable lane, a
    # workload compared as sorted lines): carried into the verdict's notes, never a reason.
    measurement_notes: tuple[str, ...] = ()
    # Holdout-tier workloads whose input the candidate has in effect seen: twins of a workload
    # with `twin = "copy"` or `"lines"`, which a table keyed by content still answers. The
    # carry-over rule never counts them as unseen input (docs/adr/0059).
    seen_inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictName
    reasons: tuple[str, ...]
    rests_on: str | None = None
    lane: str | None = None
    notes: tuple[str, ...] = field(default=())
