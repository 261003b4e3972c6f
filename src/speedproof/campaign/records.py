"""Writing a proposal's records next to the candidate row it becomes.

The roles of one iteration answer before any candidate row exists, and the row is written by
the judge itself (`Judge.judge` starts it before the guard). `CampaignLedger` is the ledger with
one hook: the moment a candidate row is started, the iteration's pending role calls, its
"candidate" event and the reviewer's concerns (or the advisor's hazard review, its "advisor"
event and concerns) are written with that row's id, so each candidate carries its own proposal,
cost and concerns, and a candidate killed while being judged already
has all of them on disk. Role calls that lead to no candidate (the coordinator said nothing is
left, a rule could not be written) are written without one, so every call is counted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from speedproof.advisor import HazardReview
from speedproof.advisor.records import record_hazards
from speedproof.ledger import Ledger, RoleCall

# The campaign's ledger is the ledger: its `on_candidate` hook hands the campaign the id of each
# candidate row the judge starts, so role calls and concerns land on that row.
CampaignLedger = Ledger


@dataclass(frozen=True)
class PendingConcern:
    severity: str
    text: str


@dataclass
class Recorder:
    """What one iteration has to say about its candidate, held until the row exists."""

    ledger: CampaignLedger
    campaign: str
    calls: list[RoleCall] = field(default_factory=list)
    event: dict[str, Any] | None = None
    concerns: list[PendingConcern] = field(default_factory=list)
    hazards: HazardReview | None = None

    def call(self, call: RoleCall) -> None:
        self.calls.append(call)

    def expect_candidate(
        self,
        event: dict[str, Any],
        concerns: list[PendingConcern],
        hazards: HazardReview | None = None,
    ) -> None:
        """The next candidate row started belongs to this proposal."""
        self.event = event
        self.concerns = concerns
        self.hazards = hazards
        self.ledger.on_candidate = self.attach

    def attach(self, candidate_id: int) -> None:
        for call in self.calls:
            self.ledger.add_role_call(replace(call, candidate_id=candidate_id))
        if self.event is not None:
            self.ledger.add_event(self.campaign, "candidate", self.event, candidate_id=candidate_id)
        for concern in self.concerns:
            self.ledger.add_concern(
                candidate_id, source="reviewer", severity=concern.severity, text=concern.text
            )
        if self.hazards is not None:
            record_hazards(self.ledger, self.campaign, candidate_id, self.hazards)
        self._clear()

    def flush(self) -> None:
        """Write calls that led to no candidate, so their tokens and cost still count."""
        for call in self.calls:
            self.ledger.add_role_call(call)
        self._clear()

    def _clear(self) -> None:
        self.calls, self.event, self.concerns, self.hazards = [], None, [], None
        self.ledger.on_candidate = None


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
