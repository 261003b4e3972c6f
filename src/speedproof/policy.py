"""The policy: evidence in, verdict out, and nothing else.

Pure on purpose: it imports only `speedproof.evidence` and the standard library's pure parts, so
a verdict depends on the evidence and the manifest's rules alone and can be replayed from a
record (tests/test_policy.py parses this file and enforces the allow-list).

`decide` looks at the evidence in a fixed order and the first step that fails names the verdict:
behaviour → gates → safety → representative evidence → guardrails → regressions → improvement.
Guardrail and regression failures are collected together, so a rejection lists all of them.
The limit for "worse" is `guardrail_limit_pct` for every metric, the primary one included.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from speedproof.evidence import Comparison, Evidence, PolicyRules, Verdict

# The same floor as `speedproof.stats.MIN_SAMPLES`; repeated because this module must not import
# scipy. Below it no test was run, so a reading cannot be representative evidence.
MIN_SAMPLES = 4
# Tiers whose guardrail metrics are judged. Holdout workloads are judged only on the primary
# metric: they exist to catch a patch tuned to the other tiers, not to police every metric.
GUARDED_TIERS = ("representative", "plausible", "stress")
# An accept resting on less than this multiple of the floor is measured once more: an A/A
# reading lands above the 3 % floor a few % of the time at 8 % noise, almost never above 6 %.
CONFIRM_MULTIPLE = 2.0
# A worsening this improbable under no change rejects without a confirmation series.
DECISIVE_P = 0.001


def decide(evidence: Evidence, rules: PolicyRules) -> Verdict:
    """The verdict on one patch; see the module docstring for the order of the steps."""
    return _judge(evidence, rules)[0]


def needs_confirmation(evidence: Evidence, rules: PolicyRules) -> tuple[str, ...]:
    """Why one confirmation series of the same size must be measured; empty when none.

    Asked for when a reading of the primary metric or a judged guardrail metric is worse than
    the limit without being significant, when an accept rests on an improvement below twice the
    floor, or when a rejection rests on measured worsenings from a single series (a regression
    must prove itself as much as a win). Never asked for when a gate decided (more pairs cannot
    undo a changed behaviour or a failed test), for a deterministic reading such as binary size,
    nor once a confirmation series is already pooled.
    """
    if evidence.series > 1 or _gate_verdict(evidence) is not None:
        return ()
    verdict, accepted_on = _judge(evidence, rules)
    if verdict.verdict == "rejected":
        return _confirm_rejection(evidence, rules)
    reasons = [
        f"{c.metric} on workload {c.workload} reads {c.render()}, worse than the "
        f"{rules.guardrail_limit_pct:g}% limit but not significant; a second series tells "
        "whether the worsening is real."
        for c in _judged_worsenings(evidence, rules)
        if not c.significant
    ]
    threshold = CONFIRM_MULTIPLE * rules.accept_floor_pct
    if accepted_on is not None and accepted_on.improvement_pct < threshold:
        reasons.append(
            f"the accept rests on an improvement of {accepted_on.improvement_pct:.2f}% on "
            f"workload {accepted_on.workload}, less than {threshold:g}% (twice the "
            f"{rules.accept_floor_pct:g}% floor); a second series must confirm it."
        )
    return tuple(reasons)


def _confirm_rejection(evidence: Evidence, rules: PolicyRules) -> tuple[str, ...]:
    """A regression must prove itself as much as a win.

    With 7 judged readings a candidate (2 workloads x 3 metrics + binary size), one reading of
    the first series is "significantly worse" by chance about 1 time in 5, so a rejection from
    one series is re-measured, unless a reading is decisive (p below DECISIVE_P: by chance
    about 0.7 % of the time across 7 readings) or deterministic (n = 1, binary size).
    """
    worse = [c for c in _judged_worsenings(evidence, rules) if c.significant]
    if any(c.n <= 1 or (c.p_value is not None and c.p_value < DECISIVE_P) for c in worse):
        return ()
    return tuple(
        f"{c.metric} on workload {c.workload} reads {c.render()}, significantly worse than "
        f"the {rules.guardrail_limit_pct:g}% limit in one series; a second series must "
        "confirm the regression before it rejects."
        for c in worse
    )


def _judge(evidence: Evidence, rules: PolicyRules) -> tuple[Verdict, Comparison | None]:
    """The verdict, and the comparison an accept rests on (None unless accepted)."""
    early = _gate_verdict(evidence) or _representative_verdict(evidence, rules)
    if early is not None:
        return early, None
    notes = _notes(evidence, rules)
    # Guardrail failures first, then regressions of the primary metric: the documented order.
    worsenings = sorted(
        _judged_worsenings(evidence, rules), key=lambda c: c.metric == rules.primary_metric
    )
    failures = [reason for reason in (_why_rejected(c, rules) for c in worsenings) if reason]
    if failures:
        return Verdict("rejected", tuple(failures), notes=notes), None
    return _improvement(evidence, rules, notes)


def _gate_verdict(evidence: Evidence) -> Verdict | None:
    """Behaviour, then the gates (build, tests …), then safety: each rejects on its own."""
    if not evidence.behaviour_matches:
        detail = "; ".join(evidence.behaviour_detail) or "the candidate's output differs"
        return Verdict("rejected", (_sentence(f"behaviour changed: {detail}"),))
    if evidence.failure_summary:
        gates = "; ".join(evidence.failure_summary)
        return Verdict("rejected", (_sentence(f"gates failed: {gates}"),))
    if not evidence.safety_checks_passed:
        detail = "; ".join(evidence.safety_detail) or "no detail was recorded"
        return Verdict("rejected", (_sentence(f"safety checks failed: {detail}"),))
    return None


def _sentence(text: str) -> str:
    """End a reason built from recorded detail with exactly one full stop."""
    return text if text.endswith((".", "!", "?")) else text + "."


def _representative_verdict(evidence: Evidence, rules: PolicyRules) -> Verdict | None:
    if not evidence.representative_evidence:
        reason = "no representative evidence: the representative workloads were not measured."
        return Verdict("inconclusive", (reason,))
    if not any(_representative(evidence, rules)):
        reason = (
            f"no representative evidence: no representative workload has a "
            f"{rules.primary_metric} reading with at least {MIN_SAMPLES} samples a side and a "
            "finite change."
        )
        return Verdict("inconclusive", (reason,))
    return None


def _representative(evidence: Evidence, rules: PolicyRules) -> Iterator[Comparison]:
    """Primary-metric readings on representative workloads that can carry a verdict."""
    for c in evidence.comparisons:
        if (
            c.metric == rules.primary_metric
            and c.tier == "representative"
            and c.n >= MIN_SAMPLES
            and math.isfinite(c.delta_pct)
        ):
            yield c


def _judged(c: Comparison, rules: PolicyRules) -> bool:
    """The primary metric is judged on every tier; a guardrail metric on all but holdout."""
    if c.metric == rules.primary_metric:
        return True
    return c.metric in rules.guardrails and c.tier in GUARDED_TIERS


def _judged_worsenings(evidence: Evidence, rules: PolicyRules) -> Iterator[Comparison]:
    """Judged readings whose point estimate is worse than the limit, significant or not."""
    for c in evidence.comparisons:
        if (
            _judged(c, rules)
            and math.isfinite(c.delta_pct)
            and c.improvement_pct < -rules.guardrail_limit_pct
        ):
            yield c


def _why_rejected(c: Comparison, rules: PolicyRules) -> str:
    """Why this worsening rejects, or "" when it does not count (not significant)."""
    if rules.statistical_support_required and not c.significant:
        return ""
    kind = "limit" if c.metric == rules.primary_metric else "guardrail"
    how = "significantly worse" if c.significant else "worse"
    why = "" if c.significant else "; statistical support is not required, so the mean decides"
    return (
        f"{c.metric} is {how} on workload {c.workload} ({c.tier}): {c.render()}, beyond the "
        f"{rules.guardrail_limit_pct:g}% {kind}{why}."
    )


def _notes(evidence: Evidence, rules: PolicyRules) -> tuple[str, ...]:
    """What the user should know that did not decide the verdict."""
    notes: list[str] = []
    limit = rules.guardrail_limit_pct
    for c in evidence.comparisons:
        if not math.isfinite(c.delta_pct):
            notes.append(f"{c.metric} on workload {c.workload} cannot be judged: {c.note}.")
        elif c.improvement_pct >= -limit:
            continue
        elif not _judged(c, rules):
            notes.append(
                f"{c.metric} on holdout workload {c.workload} reads {c.render()}, worse than the "
                f"{limit:g}% limit; holdout workloads are judged on {rules.primary_metric} only."
            )
        elif rules.statistical_support_required and not c.significant:
            notes.append(
                f"{c.metric} on workload {c.workload} reads {c.render()}, worse than the "
                f"{limit:g}% limit but not significant, so it does not reject."
            )
    return tuple(notes)


def _improvement(
    evidence: Evidence, rules: PolicyRules, notes: tuple[str, ...]
) -> tuple[Verdict, Comparison | None]:
    candidates = list(_representative(evidence, rules))
    eligible = [
        c
        for c in candidates
        if c.improvement_pct >= rules.accept_floor_pct
        # A win must prove itself: significant (which implies supported). An interval that
        # merely rules out a regression let 7.95 % of null patches through at 8 % CV
        # (docs/adr/0002); it stays good enough for guardrails, not for an accept.
        and ((c.supported and c.significant) or not rules.statistical_support_required)
    ]
    if not eligible:
        best = max(candidates, key=lambda c: c.improvement_pct)
        return Verdict("inconclusive", (_why_not(best, rules),), notes=notes), None
    best = max(eligible, key=lambda c: c.improvement_pct)
    reason = (
        f"{best.metric} improved by {best.improvement_pct:.2f}% on workload {best.workload}: "
        f"{best.render()}, at least the {rules.accept_floor_pct:g}% floor; "
        f"{_support(best, rules)}."
    )
    verdict = Verdict("accepted", (reason,), rests_on=best.workload, lane=best.lane, notes=notes)
    return verdict, best


def _support(c: Comparison, rules: PolicyRules) -> str:
    if not rules.statistical_support_required:
        return "statistical support is not required, so the point estimate decides"
    return "the change is significant"


def _why_not(best: Comparison, rules: PolicyRules) -> str:
    """Why the best representative reading does not make an accept, in words."""
    floor = rules.accept_floor_pct
    if best.improvement_pct < floor:
        return (
            f"the best reading of {best.metric}, {best.render()} on workload {best.workload}, "
            f"is an improvement of {best.improvement_pct:.2f}%, below the {floor:g}% floor."
        )
    return (
        f"{best.metric} improved by {best.improvement_pct:.2f}% on workload {best.workload}: "
        f"{best.render()}, above the {floor:g}% floor, but the change is not significant "
        f"(95% interval [{best.ci_low_pct:+.2f}%, {best.ci_high_pct:+.2f}%]), and an accept "
        "needs a significant improvement."
    )
