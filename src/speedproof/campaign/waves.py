"""A campaign on a cluster (`optimize --cluster`): per parent revision, waves of up to one
candidate per measuring node, judged in parallel.

Proposals are made on the driver: the coordinator chooses the wave's functions one after
another, then the chosen functions are drafted side by side (`drafts`) and written in the order
chosen; the roles see the ones still being made or judged in their history ("being judged"), so
they turn to another function or rule (one at a time, as in a campaign without a cluster, with
the advisor's seats or a replayed recording). Each goes to a node once written, in a job that
holds that node's measurement slot and all its CPUs
(`cluster.measuring_on`), and is judged there whole: baseline and candidate are built, tested and
measured in pairs on that node only, so no timing is ever compared across machines. A wave
takes as many proposals as there are nodes with a measurement slot (one on the local back end),
never more than the candidate budget leaves.

Records. Before its job leaves, a proposal is written as a "dispatched" event holding its diff
and its records (role calls, the candidate event, concerns: `records.Held`). Its candidate row
lands in one transaction when the node's result comes back, with the node's facts
(`cluster.judging`). A driver stopped mid-wave loses nothing: on resume, a dispatched proposal
that never landed is judged again from its diff, with no model call. A worker that died mid-job
has its job run again by the execution layer; a node lost mid-wave has its jobs judged on a
live node (`flight`). Nothing was written before the result came, so the ledger holds each
candidate once.

Several accepts in one wave. All were measured against the same parent, and one becomes the
next parent: the largest `Attempt.gain`, the earliest candidate on a tie. Each of the others gets
a "passed-over" note before the link is made, so a resume, which links by the same rule from the
ledger, never links one; the next wave judges it again against the new parent first (a new
candidate, `carried_from`, within the budget), and a win that still stands on top of the other
is linked in its turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from speedproof.advisor import AdvisorFlags
from speedproof.agents.providers.replay import ReplayProvider
from speedproof.campaign import exits
from speedproof.campaign.candidate_events import Proposal, judged_event
from speedproof.campaign.checkout import ParentCheckout
from speedproof.campaign.drafts import Chosen, Draft, Drafter, placeholder
from speedproof.campaign.drafts import Setting as DraftSetting
from speedproof.campaign.exits import Exit
from speedproof.campaign.flight import Flight
from speedproof.campaign.loop import ORIGIN, Campaign, Setting, View
from speedproof.campaign.records import Held
from speedproof.campaign.roles_step import Roles
from speedproof.campaign.state import Attempt, CampaignState
from speedproof.cluster.bundle_cache import Shipments
from speedproof.cluster.jobs import Batch, Cluster
from speedproof.cluster.judging import Judged, JudgeJob, Shipper, judge_on_node, measuring_nodes
from speedproof.discovery import HotFunction
from speedproof.ground.errors import InfrastructureError
from speedproof.judge.evaluate import Judge, JudgeOptions

BEING_JUDGED = "being judged"


def campaign_for(setting: Setting, view: View) -> Campaign:
    """The campaign `setting` asks for: on its cluster, or judged here one at a time."""
    if setting.cluster is None:
        return Campaign(setting, view)
    return ClusterCampaign(setting, view, setting.cluster)


@dataclass(frozen=True)
class Dispatch:
    """A proposal on its way to a node: its "dispatched" event, its patch and its records."""

    id: int
    patch: str
    held: Held
    number: int = 0

    @property
    def event(self) -> dict[str, Any]:
        return self.held.event or {}

    def view(self) -> dict[str, Any]:
        """The proposal as the roles see it in the history while it is judged."""
        return {
            "candidate_id": None,
            "function": self.event.get("function", ""),
            "hypothesis": self.event.get("hypothesis", ""),
            "rule": self.event.get("rule"),
            "verdict": BEING_JUDGED,
            "reasons": [],
            "diff_sha256": self.event.get("diff_sha256", ""),
        }


class ClusterCampaign(Campaign):
    """The campaign loop with its candidates judged on the nodes of `cluster`."""

    def __init__(self, setting: Setting, view: View, cluster: Cluster) -> None:
        super().__init__(setting, view)
        self.cluster = cluster
        self.nodes = measuring_nodes(cluster)
        self.shipper = Shipper(
            setting.loaded,
            unsandboxed=setting.sandbox.name == "none",
            holdout_dir=setting.holdout_dir,
        )
        # Which node has which parent's bundle: each is shipped to a node once.
        self.shipments = Shipments()

    def _flight(self, batch: Batch[JudgeJob, Judged]) -> Flight[Dispatch]:
        return Flight(batch, self.cluster, self.nodes, self.shipments, self.view.say)

    # ----- one wave against a parent -----------------------------------------------------

    def _step(
        self,
        state: CampaignState,
        parent: ParentCheckout,
        judge: Judge,
        flags: AdvisorFlags | None,
    ) -> Exit | bool:
        """One wave: proposals sent as they are made, judged, the best accept linked."""
        # The nodes as they are now: one that died since the last wave is left out.
        self.nodes = measuring_nodes(self.cluster)
        # A stop while gathering (Ctrl-C, a provider that fails) cancels the jobs in flight:
        # their proposals are dispatched events, judged again on resume.
        with self.cluster.batch(judge_on_node) as batch:
            flight = self._flight(batch)
            ended = self._gather(parent, flags, flight)
            self._collect(flight)
        if self._link_best():
            return True
        return ended if ended is not None else False

    def _gather(
        self, parent: ParentCheckout, flags: AdvisorFlags | None, flight: Flight[Dispatch]
    ) -> Exit | None:
        """Fill the wave: passed-over accepts first, then new proposals, until the wave is
        full or the proposer stops (its Exit is returned)."""
        state = self.state()
        for attempt in state.carries()[: self._room(state, 0)]:
            self._send(flight, parent.rev, self._carried(attempt, parent.rev))
        while True:
            state = self.state()
            found = exits.check(state, self.s.limits)
            if found is not None or self._room(state, len(flight)) <= 0:
                return found
            more = self._more(state, parent, flags, flight)
            if more is not True:
                return more if isinstance(more, Exit) else None

    def _more(
        self,
        state: CampaignState,
        parent: ParentCheckout,
        flags: AdvisorFlags | None,
        flight: Flight[Dispatch],
    ) -> Exit | bool | None:
        """As many proposals as the wave has room for, drafted side by side when it has room
        for several; one at a time with the advisor (its calls share one recorder) or a
        replayed recording (its answers come in recorded order)."""
        room = self._room(state, len(flight))
        alone = self.advice is not None or isinstance(self.s.provider, ReplayProvider)
        if room > 1 and not alone:
            return self._drafted(state, parent, flight, room)
        self.number = state.spent.candidates + len(flight) + 1
        try:
            return self._one_more(state, parent, flags, flight)
        finally:
            self.recorder.flush()

    def _drafted(
        self, state: CampaignState, parent: ParentCheckout, flight: Flight[Dispatch], room: int
    ) -> Exit | bool | None:
        """Choose up to `room` functions in turn, draft them side by side (`drafts`), then
        write and send each in the order chosen."""
        chosen: list[Chosen] = []
        ended: Exit | bool | None = True
        for _ in range(room):
            self.number = state.spent.candidates + len(flight) + len(chosen) + 1
            choice = self._choose(state, parent, None)
            if not isinstance(choice, HotFunction):
                ended = True if choice is False else choice
                self.recorder.flush()
                break
            chosen.append(Chosen(choice, self.number, tuple(self.recorder.calls)))
            self.recorder.calls = []
            self.in_flight = [*self.in_flight, placeholder(choice)]
        setting = DraftSetting(
            parent=parent,
            language=self.manifest.target.language,
            history=self._history(state),
            concerns=[self.redact(c) for c in state.concerns],
            known_causes={
                c.function.name: state.causes[(parent.rev, c.function.name)]
                for c in chosen
                if (parent.rev, c.function.name) in state.causes
            },
        )
        if chosen:
            self.view.say(f"drafting {len(chosen)} proposals side by side")
        drafts = self._drafter().all(chosen, setting)
        self.in_flight = [d.view() for d in flight.dispatches]
        for index, draft in enumerate(drafts):
            try:
                more = self._land_draft(parent, draft, flight)
            except BaseException:
                self._write_calls(drafts[index + 1 :])
                raise
            if more is not True:
                self._write_calls(drafts[index + 1 :])
                return more
        return ended

    def _write_calls(self, drafts: list[Draft]) -> None:
        """The calls of drafts that will not be sent, so their tokens and cost still count."""
        for draft in drafts:
            self.recorder.calls = list(draft.calls)
            self.recorder.flush()

    def _drafter(self) -> Drafter:
        roles = self.roles
        return Drafter(
            lambda recorder: Roles(roles.provider, roles.provider_name, roles.target, recorder),
            self.s.campaign,
            self.s.ledger,
        )

    def _land_draft(
        self, parent: ParentCheckout, draft: Draft, flight: Flight[Dispatch]
    ) -> Exit | bool | None:
        """A draft's records written as a proposal made alone writes them: True to go on."""
        self.number = draft.chosen.number
        self.recorder.calls = list(draft.calls)
        function = draft.chosen.function.name
        if draft.error is not None:
            self.recorder.flush()
            raise draft.error
        try:
            if draft.analysed is not None:
                self._note_causes(parent.rev, function, *draft.analysed)
            if draft.no_rule is not None:
                self._no_rule(parent.rev, function, draft.no_rule)
                return True
            if draft.rejection is not None:
                reason, gate, answer = draft.rejection
                self._reject(parent.rev, function=function, reason=reason, gate=gate, answer=answer)
                return True
            return self._send_draft(parent, draft, flight)
        finally:
            self.recorder.flush()

    def _send_draft(
        self, parent: ParentCheckout, draft: Draft, flight: Flight[Dispatch]
    ) -> Exit | bool | None:
        proposal = draft.proposal
        if proposal is None:
            return True
        if proposal.diff_sha256 in {d.event.get("diff_sha256") for d in flight.dispatches}:
            return None  # the same change again: it is already being judged
        repeated = exits.repeated(self.state(), proposal.function.name, proposal.diff_sha256)
        if repeated is not None:
            return repeated
        event = judged_event(parent.rev, proposal, draft.summary, draft.review_rejection)
        self.recorder.expect_candidate(event, draft.concerns)
        self._send(flight, parent.rev, self._dispatch(parent.rev, proposal.patch))
        return True

    def _room(self, state: CampaignState, sending: int) -> int:
        left = self.s.limits.max_candidates - state.spent.candidates
        return min(len(self.nodes), left) - sending

    def _one_more(
        self,
        state: CampaignState,
        parent: ParentCheckout,
        flags: AdvisorFlags | None,
        flight: Flight[Dispatch],
    ) -> Exit | bool | None:
        """One more proposal into the wave: True to go on, None or an Exit to stop."""
        proposal = self._proposal(state, parent, flags)
        if not isinstance(proposal, Proposal):
            return True if proposal is False else proposal
        if proposal.diff_sha256 in {d.event.get("diff_sha256") for d in flight.dispatches}:
            return None  # the same change again: it is already being judged
        repeated = exits.repeated(state, proposal.function.name, proposal.diff_sha256)
        if repeated is not None:
            return repeated
        self._review(parent, proposal)
        self._send(flight, parent.rev, self._dispatch(parent.rev, proposal.patch))
        return True

    def _dispatch(self, parent_rev: str, patch: str, held: Held | None = None) -> Dispatch:
        """Write the proposal down before its job leaves (the recorder's records, or `held`)."""
        held = held if held is not None else self.recorder.hold()
        body = {"parent": parent_rev, "diff": patch, "records": held.to_record()}
        number = self.s.ledger.add_event(self.s.campaign, "dispatched", body)
        return _dispatch_of(number, patch, held)

    def _send(self, flight: Flight[Dispatch], parent_rev: str, dispatch: Dispatch) -> None:
        options = JudgeOptions(base=parent_rev, origin=ORIGIN, campaign=self.s.campaign)
        number = self.state().spent.candidates + len(flight) + 1
        dispatch = replace(dispatch, number=number)
        node = flight.send(dispatch, self.shipper.job(dispatch.patch, options))
        self.in_flight = [d.view() for d in flight.dispatches]
        self.view.say(
            f"candidate {number} {dispatch.event.get('function', '')}: judging on node "
            f"{_short(node.id)}"
        )

    def _collect(self, flight: Flight[Dispatch]) -> None:
        """Land every result of the wave; a job that failed ends the campaign afterwards,
        its proposal left dispatched for a resume to judge again."""
        failures: list[str] = []
        for dispatch, node, finished in flight.results():
            if finished.value is None:
                failures.append(f"node {_short(node.id)}: {finished.error}")
                continue
            judged = finished.value
            self.recorder.expect_held(dispatch.held)
            try:
                candidate = self.shipper.land(judged, self.s.ledger)
            except InfrastructureError as exc:  # nothing of it was written
                failures.append(f"node {_short(node.id)}: {exc}")
                continue
            finally:
                self.s.ledger.on_candidate = None
            if judged.error is not None:
                failures.append(f"node {_short(node.id)}: {judged.error}")
            self._say_landed(dispatch, candidate, judged)
        self.in_flight = []
        if failures:
            raise InfrastructureError(
                "judging on the cluster failed: " + "; ".join(failures) + " (--resume judges "
                "these again)"
            )

    def _say_landed(self, dispatch: Dispatch, candidate: int, judged: Judged) -> None:
        event = dispatch.event
        rule = f" [{event['rule']}]" if event.get("rule") else ""
        verdict = (judged.verdict or "error").upper()
        reason = judged.reasons[0] if judged.reasons else (judged.error or "")
        self.view.say(
            f"candidate {dispatch.number} (#{candidate}) {event.get('function', '')}{rule} on "
            f"node {_short(str(judged.node.get('id')))}: {verdict} - {reason}"
        )

    def _link_best(self) -> bool:
        """Link the best accept waiting against the head, passing over the others first."""
        state = self.state()
        best = state.pending_accept()
        if best is None:
            return False
        for other in state.unlinked_accepts():
            if other.candidate_id == best.candidate_id:
                continue
            note = {
                "what": "passed-over",
                "candidate": other.candidate_id,
                "linked": best.candidate_id,
                "parent": state.head,
            }
            self.s.ledger.add_event(self.s.campaign, "note", note)
            self.view.say(
                f"accepted #{other.candidate_id} ({other.gain:.1f}%) passed over for "
                f"#{best.candidate_id} ({best.gain:.1f}%); it is judged again on the new parent"
            )
        self._link(self.state(), best.candidate_id, best.diff, best.hypothesis)
        return True

    def _carried(self, attempt: Attempt, parent_rev: str) -> Dispatch:
        event = {**_event_of(attempt, parent_rev), "carried_from": attempt.candidate_id}
        self.view.say(f"judging passed-over #{attempt.candidate_id} again on {parent_rev[:12]}")
        return self._dispatch(parent_rev, attempt.diff, Held(event=event))

    # ----- what a stopped session left ----------------------------------------------------

    def _settle(self, state: CampaignState) -> None:
        """Finish named rejections, judge again (on the cluster) what was dispatched and never
        landed and what ended in an error, then link the best accept waiting."""
        for attempt in state.unfinished():
            if attempt.needs_finishing:
                self._resettle(attempt)
        state = self.state()
        again = [*self._orphans(state), *self._rejudges(state)]
        if again:
            with self.cluster.batch(judge_on_node) as batch:
                flight = self._flight(batch)
                for dispatch in again:
                    self._send(flight, state.head, dispatch)
                self._collect(flight)
        self._link_best()

    def _orphans(self, state: CampaignState) -> list[Dispatch]:
        found = []
        for number, body in state.orphans():
            held = Held.from_record(body["records"])
            if body["parent"] == state.head:
                self.view.say(f"judging dispatched proposal {number} again from its diff")
                found.append(_dispatch_of(number, str(body["diff"]), held))
                continue
            held.flush(self.s.ledger)
            note = {"what": "dispatch-abandoned", "dispatch": number}
            self.s.ledger.add_event(self.s.campaign, "note", note)
        return found

    def _rejudges(self, state: CampaignState) -> list[Dispatch]:
        found = []
        for attempt in state.unfinished():
            if not attempt.needs_judging:
                continue
            if attempt.base_rev != state.head:
                note = {"what": "abandoned", "candidate": attempt.candidate_id}
                self.s.ledger.add_event(self.s.campaign, "note", note)
                continue
            self.view.say(f"judging candidate #{attempt.candidate_id} again from its diff")
            event = {**_event_of(attempt, state.head), "rejudge_of": attempt.candidate_id}
            found.append(self._dispatch(state.head, attempt.diff, Held(event=event)))
        return found


def _dispatch_of(number: int, patch: str, held: Held) -> Dispatch:
    return Dispatch(number, patch, replace(held, event={**(held.event or {}), "dispatch": number}))


def _event_of(attempt: Attempt, parent_rev: str) -> dict[str, Any]:
    """The "candidate" event of a candidate judged again from `attempt`'s diff."""
    return {
        "function": attempt.function,
        "hypothesis": attempt.hypothesis,
        "rule": attempt.rule,
        "invalid": False,
        "diff_sha256": attempt.diff_sha256,
        "parent": parent_rev,
        "review": None
        if attempt.objected is None
        else {"recommendation": "reconsider" if attempt.objected else "proceed"},
        "rejudge_of": None,
    }


def _short(node: str) -> str:
    return node[:12]
