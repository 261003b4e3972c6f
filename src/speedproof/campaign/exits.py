"""Why a campaign stops: each exit and escalation condition, decided from the ledger's state.

Pure functions of `CampaignState` and the limits, so the loop and a resumed campaign stop for
the same reasons (docs/adr/0023-campaign-loop.md defines each condition). An exit is an ordinary
end; an escalation is an end that needs a person, because going on would mean changing what
judges the candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from speedproof.campaign.options import Limits
from speedproof.campaign.state import Attempt, CampaignState

TARGET_REACHED = "target-reached"
BUDGET_CANDIDATES = "budget-candidates"
BUDGET_TIME = "budget-time"
BUDGET_TOKENS = "budget-tokens"
BUDGET_COST = "budget-cost"
CONSECUTIVE_FAILURES = "consecutive-failures"
REPEATED_HYPOTHESIS = "repeated-hypothesis"
NOTHING_LEFT = "nothing-left"
UNSTABLE_BENCHMARK = "unstable-benchmark"
PROTECTED_METRIC = "protected-metric-regressed"
ERROR = "error"
INTERRUPTED = "interrupted"
# Escalations.
EVALUATOR_CHANGE = "evaluator-would-change"
TESTS_CONFLICT = "metric-conflicts-with-tests"

# Candidates blocked by the guard for protected paths before the campaign asks a person: one can
# be a proposer's slip, a second means the speedup it keeps reaching for lies in what judges it.
GUARD_BLOCKS = 2
# Candidates in a row, each rejected on a protected metric (a guardrail), that end a campaign.
PROTECTED_IN_A_ROW = 2
# Candidates in a row failing the same tests, with the reviewer seeing no problem.
TESTS_IN_A_ROW = 2


@dataclass(frozen=True)
class Exit:
    condition: str
    message: str
    escalation: bool = False


def cumulative(state: CampaignState) -> dict[str, float]:
    """The accepted chain's improvement per representative workload on the primary metric, in %.

    Each link was measured against the previous one, so the chain's change is the product of the
    links' mean ratios (two links of -10 % make -19 %), as the report computes it. A workload
    missing from a link's readings contributes no change for that link.
    """
    linked = {cid for cid, _ in state.chain}
    ratios: dict[str, float] = {}
    lower: dict[str, bool] = {}
    for attempt in state.attempts:
        if attempt.candidate_id not in linked:
            continue
        for reading in attempt.readings:
            ratio = reading.candidate_mean / reading.baseline_mean
            ratios[reading.workload] = ratios.get(reading.workload, 1.0) * ratio
            lower[reading.workload] = reading.lower_is_better
    return {
        workload: (1 - product) * 100 if lower[workload] else (product - 1) * 100
        for workload, product in ratios.items()
    }


def check(state: CampaignState, limits: Limits) -> Exit | None:
    """The first condition that holds, in this order: the target, the escalations, a protected
    metric, consecutive failures, then the budgets."""
    for rule in (
        _target,
        _evaluator_change,
        _tests_conflict,
        _protected_metric,
        _failures,
        _budgets,
    ):
        found = rule(state, limits)
        if found is not None:
            return found
    return None


def _target(state: CampaignState, limits: Limits) -> Exit | None:
    if limits.target_pct is None or not state.chain:
        return None
    figures = cumulative(state)
    if not figures:
        return None
    workload = max(figures, key=lambda w: figures[w])
    best = figures[workload]
    if best < limits.target_pct:
        return None
    return Exit(
        TARGET_REACHED,
        f"the accepted chain ({len(state.chain)} candidate(s)) improves the primary metric by "
        f"{best:.2f}% on workload {workload}, at least the {limits.target_pct:g}% target",
    )


def _evaluator_change(state: CampaignState, limits: Limits) -> Exit | None:
    blocked = [a for a in state.settled() if a.guard_protected]
    if len(blocked) < GUARD_BLOCKS:
        return None
    ids = ", ".join(str(a.candidate_id) for a in blocked)
    return Exit(
        EVALUATOR_CHANGE,
        f"candidates {ids} were blocked by the guard for changing protected paths: the "
        "proposers keep reaching for what judges the target (tests, inputs, the manifest). A "
        "person should decide whether the evaluator or the protected paths need to change; the "
        "campaign will not change them.",
        escalation=True,
    )


def _tests_conflict(state: CampaignState, limits: Limits) -> Exit | None:
    last = _last(state, TESTS_IN_A_ROW)
    if last is None or not all(a.tests_failed and a.objected is False for a in last):
        return None
    if len({a.tests_failed for a in last}) != 1:
        return None
    ids = ", ".join(str(a.candidate_id) for a in last)
    return Exit(
        TESTS_CONFLICT,
        f"candidates {ids} each failed the same tests ({'; '.join(last[0].tests_failed)}) "
        "while the reviewer raised no objection to the changes: the tests may assert something "
        "the speedup has to change (timing, an internal detail). A person should look at those "
        "tests; the campaign does not touch them.",
        escalation=True,
    )


def _protected_metric(state: CampaignState, limits: Limits) -> Exit | None:
    last = _last(state, PROTECTED_IN_A_ROW)
    if last is None or not all(a.breaches for a in last):
        return None
    detail = "; ".join(f"candidate {a.candidate_id}: {', '.join(a.breaches)}" for a in last)
    return Exit(
        PROTECTED_METRIC,
        f"{PROTECTED_IN_A_ROW} candidates in a row were rejected because a protected metric "
        f"regressed ({detail})",
    )


def _failures(state: CampaignState, limits: Limits) -> Exit | None:
    run = 0
    for attempt in reversed(state.settled()):
        if attempt.verdict == "accepted":
            break
        run += 1
    if run < limits.max_failures:
        return None
    return Exit(
        CONSECUTIVE_FAILURES,
        f"{run} candidates in a row were not accepted (--max-failures {limits.max_failures})",
    )


def _budgets(state: CampaignState, limits: Limits) -> Exit | None:
    spent = state.spent
    if spent.candidates >= limits.max_candidates:
        return Exit(
            BUDGET_CANDIDATES,
            f"{spent.candidates} candidates proposed, the budget is {limits.max_candidates}",
        )
    if spent.seconds >= limits.max_duration_s:
        return Exit(
            BUDGET_TIME,
            f"{_duration(spent.seconds)} spent, the budget is {_duration(limits.max_duration_s)}",
        )
    if limits.max_tokens is not None and spent.tokens >= limits.max_tokens:
        return Exit(
            BUDGET_TOKENS, f"{spent.tokens} tokens spent, the budget is {limits.max_tokens}"
        )
    if limits.max_cost_usd is not None:
        if spent.unpriced_calls:
            return Exit(
                BUDGET_COST,
                f"{spent.unpriced_calls} role call(s) have no known price, so the --max-cost "
                f"budget of ${limits.max_cost_usd:g} cannot be kept; stopping rather than "
                "guessing",
            )
        if spent.cost_usd >= limits.max_cost_usd:
            return Exit(
                BUDGET_COST,
                f"${spent.cost_usd:.4f} spent, the budget is ${limits.max_cost_usd:g}",
            )
    return None


def repeated(state: CampaignState, function: str, diff_sha256: str) -> Exit | None:
    """The same change to the same function, proposed a second time."""
    for attempt in state.attempts:
        if attempt.function == function and attempt.diff_sha256 == diff_sha256 and attempt.diff:
            return Exit(
                REPEATED_HYPOTHESIS,
                f"the proposed change to {function} (diff sha256 {diff_sha256[:12]}) was "
                f"already candidate {attempt.candidate_id} ({attempt.history_verdict}); the "
                "proposers are repeating themselves",
            )
    return None


def unstable(body: dict[str, object]) -> Exit | None:
    """The A/A check's record: the base measured against itself must come out inconclusive."""
    verdict = body.get("verdict")
    if verdict in ("inconclusive", "skipped"):
        return None
    reasons = body.get("reasons")
    said = "; ".join(str(r) for r in reasons) if isinstance(reasons, list) else ""
    return Exit(
        UNSTABLE_BENCHMARK,
        f"the base revision measured against a second checkout of itself came out {verdict}"
        + (f" ({said})" if said else "")
        + ": verdicts on this benchmark, on this machine, cannot be trusted",
    )


def _last(state: CampaignState, count: int) -> list[Attempt] | None:
    settled = state.settled()
    if len(settled) < count:
        return None
    return settled[-count:]


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
