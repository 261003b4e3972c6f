"""A gate that ends a candidate early, and the evidence it leaves for the policy to word."""

from __future__ import annotations

from speedproof.judge.policy.evidence import Evidence


class Ended(Exception):
    """A gate ended the candidate; `evidence` says why, and the policy words the verdict."""

    def __init__(self, evidence: Evidence) -> None:
        super().__init__("candidate ended at a gate")
        self.evidence = evidence


def failed(*reasons: str) -> Evidence:
    return Evidence(
        behaviour_matches=True,
        failure_summary=tuple(reasons),
        safety_checks_passed=True,
        representative_evidence=False,
        comparisons=(),
    )


def unsafe(*reasons: str) -> Evidence:
    return Evidence(
        behaviour_matches=True,
        failure_summary=(),
        safety_checks_passed=False,
        representative_evidence=False,
        comparisons=(),
        safety_detail=tuple(reasons),
    )
