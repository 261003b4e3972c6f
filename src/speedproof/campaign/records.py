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
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

from speedproof.advisor import HazardReview
from speedproof.advisor.records import CONCERN_SOURCE, EVENT_KIND, hazards_event
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
        self.hold().attach(self.ledger, self.campaign, candidate_id)

    def hold(self) -> Held:
        """Take this proposal's records out, to be attached to its candidate later (the
        candidate is judged on a node of a cluster while other proposals are made)."""
        concerns = [("reviewer", c.severity, c.text) for c in self.concerns]
        advisor = None
        if self.hazards is not None:
            advisor = hazards_event(self.hazards)
            concerns += [(CONCERN_SOURCE, sev, text) for sev, text in self.hazards.concerns()]
        held = Held(tuple(self.calls), self.event, tuple(concerns), advisor)
        self._clear()
        return held

    def expect_held(self, held: Held) -> None:
        """The next candidate row started belongs to `held`'s proposal."""
        self.ledger.on_candidate = partial(held.attach, self.ledger, self.campaign)

    def flush(self) -> None:
        """Write calls that led to no candidate, so their tokens and cost still count."""
        self.hold().flush(self.ledger)

    def _clear(self) -> None:
        self.calls, self.event, self.concerns, self.hazards = [], None, [], None
        self.ledger.on_candidate = None


@dataclass(frozen=True)
class Held:
    """One proposal's records (role calls, its "candidate" event, concerns as (source,
    severity, text), the advisor's hazards event) waiting for their candidate row; plain data,
    so a campaign can keep them in the ledger while the candidate is being judged elsewhere."""

    calls: tuple[RoleCall, ...] = ()
    event: dict[str, Any] | None = None
    concerns: tuple[tuple[str, str, str], ...] = ()
    advisor: dict[str, Any] | None = None

    def attach(self, ledger: Ledger, campaign: str, candidate_id: int) -> None:
        for call in self.calls:
            ledger.add_role_call(replace(call, candidate_id=candidate_id))
        if self.event is not None:
            ledger.add_event(campaign, "candidate", self.event, candidate_id=candidate_id)
        if self.advisor is not None:
            ledger.add_event(campaign, EVENT_KIND, self.advisor, candidate_id=candidate_id)
        for source, severity, text in self.concerns:
            ledger.add_concern(candidate_id, source=source, severity=severity, text=text)

    def flush(self, ledger: Ledger) -> None:
        """Write the role calls alone (the proposal was never judged): their cost still counts."""
        for call in self.calls:
            ledger.add_role_call(call)

    def to_record(self) -> dict[str, Any]:
        return {
            "calls": [asdict(call) for call in self.calls],
            "event": self.event,
            "concerns": [list(c) for c in self.concerns],
            "advisor": self.advisor,
        }

    @classmethod
    def from_record(cls, body: dict[str, Any]) -> Held:
        return cls(
            calls=tuple(RoleCall(**call) for call in body.get("calls", [])),
            event=body.get("event"),
            concerns=tuple((str(s), str(v), str(t)) for s, v, t in body.get("concerns", [])),
            advisor=body.get("advisor"),
        )


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
