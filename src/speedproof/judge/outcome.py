"""What one judged candidate came to: the record of each gate, the `Outcome` and its JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from speedproof.judge.policy.evidence import Comparison, Verdict


@dataclass(frozen=True)
class GateRecord:
    name: str
    passed: bool
    duration_s: float
    reasons: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What one judged candidate came to, as the CLI and a campaign see it."""

    verdict: Verdict
    gates: tuple[GateRecord, ...]
    comparisons: tuple[Comparison, ...]
    ledger_id: int
    sandbox: str
    base_rev: str
    timings: dict[str, float]
    # Looks of the sequential schedule taken (0 when a gate ended the candidate first), and
    # the pairs per measured workload.
    looks: int = 0
    pairs: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.verdict,
            "reasons": list(self.verdict.reasons),
            "notes": list(self.verdict.notes),
            "rests_on": self.verdict.rests_on,
            "lane": self.verdict.lane,
            "gates": [
                {
                    "name": g.name,
                    "passed": g.passed,
                    "duration_s": g.duration_s,
                    "reasons": list(g.reasons),
                }
                for g in self.gates
            ],
            "comparisons": [comparison_json(c) for c in self.comparisons],
            "ledger_id": self.ledger_id,
            "sandbox": self.sandbox,
            "base_rev": self.base_rev,
            "looks": self.looks,
            "pairs": self.pairs,
            "timings": self.timings,
        }


def comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "workload": c.workload,
        "metric": c.metric,
        "tier": c.tier,
        "lane": c.lane,
        "delta_pct": c.delta_pct,
        "ci_pct": [c.ci_low_pct, c.ci_high_pct],
        "p_value": c.p_value,
        "p_mannwhitney": c.p_mannwhitney,
        "p_welch": c.p_welch,
        "welch_t": c.welch_t,
        "n_baseline": c.n_baseline,
        "n_candidate": c.n_candidate,
        "baseline_mean": c.baseline_mean,
        "candidate_mean": c.candidate_mean,
        "significant": c.significant,
        "supported": c.supported,
        "exact": c.exact,
        "note": c.note,
        "extra": dict(c.extra),
        "figure": c.render(),
    }


def pairs_per_workload(comparisons: tuple[Comparison, ...]) -> dict[str, int]:
    """Pairs behind each workload's timed reading."""
    return {c.workload: c.n for c in comparisons if c.lane == "timed" and c.metric == "wall"}
