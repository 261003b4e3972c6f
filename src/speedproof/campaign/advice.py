"""The advisor in a campaign's analyst and reviewer seats (docs/adr/0023, docs/adr/0024).

`--analyst advisor`: once per parent revision the advisor asks its seven cause questions of the
hot functions (the first `[advisor] max_functions`); the flags that stand (cleared both gates,
not vetoed) are the coordinator's `flags` and, per function, the optimizer's `causes` (source
"advisor"), and `advisor.rank` orders the hot list the coordinator is shown (score = self share
x (0.25 + 0.75 x the strongest flag's probability)). The flags are written as one "advisor"
event per parent and read back from it, so a resumed campaign ranks exactly as it did.

`--reviewer advisor`: the advisor's eight hazard questions about each candidate diff replace the
reviewer role. Each flagged hazard becomes a concern of source "advisor" stored with the
candidate (with the "advisor" hazards event) and shown to the next optimizer call. The
recommendation kept in the candidate event is "reconsider" when a concern is high (P(yes) >=
0.9), else "proceed": the rule the reviewer role is told to follow.

Every completion of a model advisor becomes a role call of role "advisor", so the token, cost
and call budgets count it; the static advisor makes none. A model advisor's answers are cached
in the campaign folder by build, question and subject, so a function whose text did not change
is not asked again at the next parent, nor after `--resume`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from speedproof.advisor import (
    Advisor,
    AdvisorFlags,
    CauseFlag,
    FunctionFlags,
    HazardReview,
    StaticAdvisor,
    open_advisor,
)
from speedproof.advisor.cache import AnswerCache, CachedAnswerer
from speedproof.advisor.records import record_causes
from speedproof.agents.providers.base import ChatMessage, Completion
from speedproof.agents.providers.replay import messages_digest
from speedproof.campaign.checkout import ParentCheckout
from speedproof.campaign.records import CampaignLedger, Recorder
from speedproof.discovery import HotFunction
from speedproof.ground.errors import InfrastructureError
from speedproof.ledger import RoleCall
from speedproof.manifest_loading import LoadedManifest

ROLE = "advisor"


class AdvisorCalls:
    """Each completion of a model advisor, as a role call handed to the campaign's recorder."""

    def __init__(self) -> None:
        self.recorder: Recorder | None = None

    def observe(self, completion: Completion, messages: list[ChatMessage]) -> None:
        recorder = self.recorder
        if recorder is None:
            raise InfrastructureError("the advisor answered before the campaign could record it")
        recorder.call(
            RoleCall(
                campaign=recorder.campaign,
                candidate_id=None,
                role=ROLE,
                provider=completion.provider,
                model=completion.model,
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                cost_usd=completion.cost_usd,
                duration_s=completion.duration_s,
                ok=True,
                rejection=None,
                prompt_sha256=messages_digest(messages),
                answer=completion.text,
            )
        )


@dataclass(frozen=True)
class AdvisorSeats:
    """The advisor a campaign opened, and the seats it takes."""

    advisor: Advisor
    calls: AdvisorCalls
    analyst: bool
    reviewer: bool

    @property
    def model(self) -> str:
        return self.advisor.answerer.model_id

    def cached(self, folder: Path) -> AdvisorSeats:
        """These seats with a model advisor's answers cached in `folder` (the static advisor is
        cheap and never cached)."""
        if isinstance(self.advisor.answerer, StaticAdvisor | CachedAnswerer):
            return self
        answerer = CachedAnswerer(self.advisor.answerer, AnswerCache.in_folder(folder))
        return replace(self, advisor=replace(self.advisor, answerer=answerer))

    def close(self) -> None:
        if isinstance(self.advisor.answerer, CachedAnswerer):
            self.advisor.answerer.cache.close()

    def flags(
        self,
        parent: ParentCheckout,
        known: dict[str, Any] | None,
        *,
        ledger: CampaignLedger,
        campaign: str,
    ) -> AdvisorFlags:
        """The parent's cause flags: read back from its event (`known`), else asked and kept."""
        if known is not None:
            return flags_from_event(known)
        hot = list(parent.profile.functions)
        found = self.advisor.analyst(read_file=parent.file_text).causes(hot)
        record_causes(ledger, campaign, found, hot, parent=parent.rev)
        return found

    def hazards(self, parent: ParentCheckout, diff: str, function: HotFunction) -> HazardReview:
        return self.advisor.reviewer(read_file=parent.file_text).hazards(diff, function)


def open_seats(loaded: LoadedManifest, *, analyst: bool, reviewer: bool) -> AdvisorSeats | None:
    """The manifest's advisor when a seat is the advisor's, checked against its baseline now;
    None when neither is. The baseline path is relative to the manifest."""
    if not (analyst or reviewer):
        return None
    settings = loaded.manifest.advisor
    baseline = loaded.root / settings.baseline if settings.baseline else None
    calls = AdvisorCalls()
    advisor = open_advisor(settings, baseline=baseline, observe=calls.observe)
    return AdvisorSeats(advisor, calls, analyst, reviewer)


def flags_from_event(body: dict[str, Any]) -> AdvisorFlags:
    """The flags a "causes" event recorded (`advisor.records.causes_event`), as they were."""
    functions = tuple(
        FunctionFlags(
            str(entry["function"]),
            float(entry["self_pct"]),
            tuple(_cause_flag(str(entry["function"]), c) for c in entry["causes"]),
        )
        for entry in body["functions"]
        if entry.get("asked", True)
    )
    return AdvisorFlags(
        model=str(body["model"]),
        baseline=str(body["baseline"]),
        gates=dict(body["gates"]),
        functions=functions,
    )


def _cause_flag(function: str, record: dict[str, Any]) -> CauseFlag:
    return CauseFlag(
        function=function,
        cause=str(record["cause"]),
        probability=float(record["probability"]),
        z=float(record["z"]),
        outcome=record["gate"],
        veto=record.get("veto"),
        evidence=tuple(str(e) for e in record.get("evidence", [])),
    )


def review_summary(review: HazardReview) -> dict[str, Any]:
    """The candidate event's `review` for an advisor review."""
    severities = [severity for severity, _ in review.concerns()]
    return {
        "source": ROLE,
        "recommendation": "reconsider" if "high" in severities else "proceed",
        "concerns": severities,
    }
