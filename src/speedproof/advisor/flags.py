"""What the advisor says about hot functions and candidate diffs, as plain records.

A `CauseFlag` is one cause question's answer about one function: its probability, its z against
the usual answer, the gate outcome, and the veto that overruled it if any; `flagged` is true
only for an answer that cleared both gates and was not vetoed. A `Hazard` is a hazard question's
answer about a diff, `flagged` when it cleared the (stricter) hazard gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from speedproof.advisor.gates import Outcome
from speedproof.advisor.questions import HAZARD_TITLES

Severity = Literal["low", "medium", "high"]
# A flagged hazard at P(yes) >= 0.9 is a "high" concern, any other flagged one "medium".
HIGH_SEVERITY_P = 0.9


@dataclass(frozen=True)
class CauseFlag:
    function: str
    cause: str
    probability: float
    z: float
    outcome: Outcome
    veto: str | None = None
    evidence: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return self.outcome == "flagged" and self.veto is None

    @property
    def vetoed(self) -> bool:
        return self.outcome == "flagged" and self.veto is not None

    def to_record(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "probability": self.probability,
            "z": self.z,
            "gate": self.outcome,
            "flagged": self.flagged,
            "veto": self.veto,
            "evidence": list(self.evidence),
        }

    def view(self, source: str) -> dict[str, Any]:
        """The CauseView/FlagView the roles see."""
        evidence = "; ".join(self.evidence) or f"+{self.z:.1f} sd above the usual answer"
        return {
            "function": self.function,
            "cause": self.cause,
            "probability": self.probability,
            "source": source,
            "evidence": evidence,
        }


@dataclass(frozen=True)
class FunctionFlags:
    function: str
    self_pct: float
    answers: tuple[CauseFlag, ...]

    @property
    def flagged(self) -> list[CauseFlag]:
        """Flags that stand, strongest first (z, then probability, then cause order)."""
        standing = [a for a in self.answers if a.flagged]
        return sorted(standing, key=lambda a: (-a.z, -a.probability))

    @property
    def vetoed(self) -> list[CauseFlag]:
        return [a for a in self.answers if a.vetoed]

    @property
    def top(self) -> CauseFlag | None:
        flagged = self.flagged
        return flagged[0] if flagged else None


@dataclass(frozen=True)
class AdvisorFlags:
    """The advisor's answers about the hot functions it was asked about."""

    model: str
    baseline: str  # the baseline's reference digest, for the record
    gates: dict[str, float]
    functions: tuple[FunctionFlags, ...] = field(default_factory=tuple)

    def of(self, function: str) -> FunctionFlags | None:
        return next((f for f in self.functions if f.function == function), None)

    def cause_views(
        self, function: str | None = None, *, source: str = "advisor"
    ) -> list[dict[str, Any]]:
        """CauseViews of the standing flags (of one function, or all), strongest first."""
        chosen = [f for f in self.functions if function is None or f.function == function]
        return [flag.view(source) for f in chosen for flag in f.flagged]


@dataclass(frozen=True)
class Hazard:
    hazard: str
    probability: float
    z: float
    outcome: Outcome
    evidence: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return self.outcome == "flagged"

    @property
    def severity(self) -> Severity:
        return "high" if self.probability >= HIGH_SEVERITY_P else "medium"

    @property
    def text(self) -> str:
        detail = f" ({'; '.join(self.evidence)})" if self.evidence else ""
        return (
            f"advisor: {HAZARD_TITLES[self.hazard]}: P(yes) {self.probability:.2f}, "
            f"{self.z:+.1f} sd from its usual answer{detail}"
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "hazard": self.hazard,
            "probability": self.probability,
            "z": self.z,
            "gate": self.outcome,
            "flagged": self.flagged,
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True)
class HazardReview:
    model: str
    function: str
    answers: tuple[Hazard, ...]

    @property
    def flagged(self) -> list[Hazard]:
        return sorted((h for h in self.answers if h.flagged), key=lambda h: -h.probability)

    def concerns(self) -> list[tuple[Severity, str]]:
        """(severity, text) of every flagged hazard: stored as concerns of source "advisor"."""
        return [(h.severity, h.text) for h in self.flagged]
