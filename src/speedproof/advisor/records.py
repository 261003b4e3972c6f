"""How the advisor's output is written down, so a report can show it and a resumed campaign can
read it back: event bodies of kind "advisor" and concerns of source "advisor".

- causes (one event per parent revision): {"what": "causes", "parent", "model", "baseline",
  "gates", "functions": [{"function", "self_pct", "score", "rank", "flagged": [cause...],
  "vetoed": [{"cause", "reason"}], "causes": [CauseFlag records]}]}
- hazards (one event per candidate, written with its candidate id): {"what": "hazards",
  "model", "function", "flagged": [hazard...], "hazards": [Hazard records]}
- every flagged hazard is also a concern (source "advisor", severity medium/high, its text),
  which the next optimizer call is shown and the policy never sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from speedproof.advisor.flags import AdvisorFlags, HazardReview
from speedproof.advisor.rank import rank, score
from speedproof.discovery import HotFunction
from speedproof.ledger import Ledger

EVENT_KIND = "advisor"
CONCERN_SOURCE = "advisor"


def causes_event(flags: AdvisorFlags, hot: Sequence[HotFunction], *, parent: str) -> dict[str, Any]:
    order = {f.name: index + 1 for index, f in enumerate(rank(hot, flags))}
    functions = []
    for function in hot:
        found = flags.of(function.name)
        functions.append(
            {
                "function": function.name,
                "self_pct": function.self_pct,
                "score": score(function, flags),
                "rank": order[function.name],
                "asked": found is not None,
                "flagged": [c.cause for c in found.flagged] if found else [],
                "vetoed": [{"cause": c.cause, "reason": c.veto} for c in found.vetoed]
                if found
                else [],
                "causes": [c.to_record() for c in found.answers] if found else [],
            }
        )
    return {
        "what": "causes",
        "parent": parent,
        "model": flags.model,
        "baseline": flags.baseline,
        "gates": flags.gates,
        "functions": functions,
    }


def hazards_event(review: HazardReview) -> dict[str, Any]:
    return {
        "what": "hazards",
        "model": review.model,
        "function": review.function,
        "flagged": [h.hazard for h in review.flagged],
        "hazards": [h.to_record() for h in review.answers],
    }


def record_causes(
    ledger: Ledger,
    campaign: str,
    flags: AdvisorFlags,
    hot: Sequence[HotFunction],
    *,
    parent: str,
) -> None:
    ledger.add_event(campaign, EVENT_KIND, causes_event(flags, hot, parent=parent))


def record_hazards(ledger: Ledger, campaign: str, candidate_id: int, review: HazardReview) -> None:
    """The hazards event and one concern per flagged hazard, with the candidate's id."""
    ledger.add_event(campaign, EVENT_KIND, hazards_event(review), candidate_id=candidate_id)
    for severity, text in review.concerns():
        ledger.add_concern(candidate_id, source=CONCERN_SOURCE, severity=severity, text=text)
