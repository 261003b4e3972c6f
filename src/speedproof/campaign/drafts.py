"""A wave's proposals made side by side: the analyst, optimizer and reviewer calls of each
chosen function run in threads of their own, and what they produced is written in order.

The coordinator still chooses one function after another on the driver's thread, each choice
seeing the earlier ones as "being judged", so the wave's functions differ as they did when
proposals were made one at a time. Then each chosen function is drafted in a thread
(`MAX_DRAFTERS` at most): its causes (the analyst, once per function and parent), the optimizer's
change turned into a patch, the reviewer's concerns. A thread only calls its provider and reads
the parent's files: its role calls go to a `Recorder` of its own, and nothing it does touches
the ledger. The driver's thread then takes the drafts in the order the functions were chosen,
whichever finished first, and writes each one's records exactly as a proposal made alone writes
them (`waves.ClusterCampaign._land_draft`), so the ledger is the same whatever the threads'
timing.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

from speedproof.agents.answers import OptimizerAnswer, ReviewerAnswer
from speedproof.agents.edits import EditRejected, answer_to_patch
from speedproof.agents.heuristic.subject import NoRuleApplies
from speedproof.campaign.candidate_events import Proposal
from speedproof.campaign.checkout import ParentCheckout
from speedproof.campaign.records import CampaignLedger, PendingConcern, Recorder, sha256
from speedproof.campaign.roles_step import Roles
from speedproof.discovery import HotFunction
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.ledger import RoleCall

# Threads drafting at once: a model endpoint serves a few requests side by side; more only queue
# there (and the offline proposer is CPU work on the driver's 1-2 cores).
MAX_DRAFTERS = 8


@dataclass(frozen=True)
class Chosen:
    """A function the coordinator chose for the wave, with the coordinator's calls."""

    function: HotFunction
    number: int
    calls: tuple[RoleCall, ...]


@dataclass(frozen=True)
class Setting:
    """What every draft of one wave is given; read-only while the threads run."""

    parent: ParentCheckout
    language: str
    history: list[dict[str, Any]]
    concerns: list[str]
    # Causes known for each function at this parent (analyst notes), or the advisor's flags.
    known_causes: dict[str, list[dict[str, Any]]]


@dataclass
class Draft:
    """One chosen function drafted: its calls, then a proposal, a rejection or no rule."""

    chosen: Chosen
    calls: list[RoleCall] = field(default_factory=list)
    # The analyst's note, when the analyst was asked: (causes, rejection).
    analysed: tuple[list[dict[str, Any]], str | None] | None = None
    no_rule: NoRuleApplies | None = None
    # A named rejection: (reason, gate, the optimizer's answer if any).
    rejection: tuple[str, str, OptimizerAnswer | None] | None = None
    proposal: Proposal | None = None
    summary: dict[str, Any] | None = None
    review_rejection: str | None = None
    concerns: list[PendingConcern] = field(default_factory=list)
    # What the draft's thread raised (a provider that failed, say): raised again on the
    # driver's thread, in the draft's turn, after the calls it made are written.
    error: Exception | None = None


class Drafter:
    """Drafts chosen functions with `make_roles(recorder)`: Roles recording into `recorder`
    (the ledger is only named, for the recorder's type: a draft never writes it)."""

    def __init__(
        self, make_roles: Callable[[Recorder], Roles], campaign: str, ledger: CampaignLedger
    ) -> None:
        self.make_roles = make_roles
        self.campaign = campaign
        self.ledger = ledger

    def all(self, chosen: list[Chosen], setting: Setting) -> list[Draft]:
        """Every chosen function drafted, in the order chosen."""
        workers = max(1, min(MAX_DRAFTERS, len(chosen)))
        with ThreadPoolExecutor(workers, thread_name_prefix="speedproof-draft") as pool:
            return list(pool.map(lambda c: self.one(c, setting), chosen))

    def one(self, chosen: Chosen, setting: Setting) -> Draft:
        recorder = Recorder(self.ledger, self.campaign)
        roles = self.make_roles(recorder)
        draft = Draft(chosen)
        try:
            self._draft(roles, draft, setting)
        except Exception as exc:  # carried to the driver's thread, never dropped
            draft.error = exc
        draft.calls = [*chosen.calls, *recorder.calls]
        return draft

    def _draft(self, roles: Roles, draft: Draft, setting: Setting) -> None:
        function = draft.chosen.function
        causes = setting.known_causes.get(function.name)
        if causes is None:
            draft.analysed = roles.analyst(function.view(with_source=True))
            causes = draft.analysed[0]
        try:
            found = roles.optimizer(
                function=function.view(with_source=True),
                file={"path": function.file, "source": setting.parent.file_text(function.file)},
                history=setting.history,
                concerns=setting.concerns,
                causes=causes,
            )
        except NoRuleApplies as exc:
            draft.no_rule = exc
            return
        if found.value is None:
            draft.rejection = (found.rejection or "optimizer answer unusable", "answer", None)
            return
        answer = cast(OptimizerAnswer, found.value)
        try:
            edit = answer_to_patch(
                answer,
                worktree=setting.parent.worktree,
                target_rel=setting.parent.target_rel,
                language=setting.language,
            )
        except EditRejected as exc:
            draft.rejection = (f"edit {exc}", "edit", answer)
            return
        patch = normalise_patch(edit.patch)
        draft.proposal = Proposal(function, answer, patch, sha256(patch))
        self._review(roles, draft)

    def _review(self, roles: Roles, draft: Draft) -> None:
        proposal = cast(Proposal, draft.proposal)
        review = roles.reviewer(
            diff=proposal.patch,
            function=proposal.function.view(with_source=True),
            hypothesis=proposal.answer.hypothesis,
        )
        draft.review_rejection = review.rejection
        if review.value is not None:
            reviewed = cast(ReviewerAnswer, review.value)
            draft.concerns = [PendingConcern(c.severity, c.text) for c in reviewed.concerns]
            draft.summary = {
                "recommendation": reviewed.recommendation,
                "concerns": [c.severity for c in reviewed.concerns],
            }


def placeholder(function: HotFunction) -> dict[str, Any]:
    """A chosen function as the roles see it while its proposal is being made."""
    return {
        "candidate_id": None,
        "function": function.name,
        "hypothesis": "",
        "rule": None,
        "verdict": "being judged",
        "reasons": [],
        "diff_sha256": "",
    }
