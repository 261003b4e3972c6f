"""The campaign loop: one candidate at a time, from a hot function to a verdict, until an exit.

Before the first candidate the base is measured against itself (`stability`). Then, per parent
revision (the newest accepted one), discovery profiles it, widened by the explorer's workloads
when `--explorer` is on (`explorer`: asked once a campaign, profiling only), its hot functions
are recorded with, for the heuristic proposer, every rule's outcome on each (`discovery_log`),
and with `--analyst advisor` the advisor flags likely causes in its hot functions (`advice`).
Per iteration, against that parent:

1. the coordinator picks a hot function (discovery's list, ordered by the advisor's score when
   the advisor is the analyst; the history; the analyst's or the advisor's flags);
2. the analyst names likely causes, once per function and parent (kept as a "note" event), or
   the advisor's flags for that function stand in for them;
3. the optimizer writes one change (shown the function, its whole file, every earlier attempt
   with its verdict and reasons, and the reviewer's or advisor's concerns about earlier
   candidates);
4. code turns the answer into a patch (`agents.edits`);
5. the reviewer argues against it, or the advisor asks its hazard questions of the diff: the
   concerns are stored with the candidate and shown to the next optimizer call, and nothing
   either says reaches the judge;
6. the judge decides, writing the candidate to the ledger as it goes. It is built from the
   user's manifest alone, so it never measures an explorer workload.

An answer that cannot be used, or an edit that cannot be made, is a named rejection: a
candidate row with the rejection as its reason, never a crash. An accept becomes a commit on
the campaign's refs (`parents`) and the parent of what follows. The state is read back from the
ledger before every iteration, so the loop and a resumed campaign are the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

from speedproof.advisor import AdvisorFlags, rank
from speedproof.agents.answers import OptimizerAnswer, ReviewerAnswer
from speedproof.agents.edits import EditRejected, answer_to_patch
from speedproof.agents.heuristic.subject import NoRuleApplies
from speedproof.agents.providers.base import Provider
from speedproof.agents.providers.heuristic import HeuristicProvider
from speedproof.campaign import exits, parents
from speedproof.campaign.advice import AdvisorSeats, review_summary
from speedproof.campaign.candidate_events import (
    Proposal,
    judged_event,
    record_rejection,
    rejection_event,
    unjudged_diff,
)
from speedproof.campaign.checkout import ParentCheckout, ParentTree, parent_tree
from speedproof.campaign.discovery_log import EVERY_FUNCTION, DiscoveryLog
from speedproof.campaign.exits import Exit
from speedproof.campaign.explorer import Explorer
from speedproof.campaign.options import Limits
from speedproof.campaign.records import CampaignLedger, PendingConcern, Recorder, sha256
from speedproof.campaign.roles_step import Roles
from speedproof.campaign.stability import check_stability
from speedproof.campaign.state import Attempt, CampaignState, Redactor, holdout_names, load_state
from speedproof.cluster.jobs import Cluster
from speedproof.discovery import HotFunction
from speedproof.ground.errors import SpeedproofError
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.measure.runner import Sample
from speedproof.judge.outcome import Outcome
from speedproof.judge.worktree.trees import Terminated
from speedproof.manifest_loading import LoadedManifest

FINAL_PATCH = "final.patch"
ORIGIN = "campaign"


class View(Protocol):
    """Where the campaign shows what it does (the terminal, or nothing in a test)."""

    def stage(self, name: str, message: str) -> None: ...

    def sample(self, sample: Sample) -> None: ...

    def say(self, text: str) -> None: ...


@dataclass(frozen=True)
class Setting:
    """Everything one campaign works with, opened by `session`."""

    campaign: str
    loaded: LoadedManifest
    repo: Path
    folder: Path
    sandbox: Sandbox
    ledger: CampaignLedger
    provider: Provider
    provider_name: str
    limits: Limits
    stability_check: bool = True
    cache_dir: Path | None = None
    # The advisor and the seats it takes (`--analyst advisor`, `--reviewer advisor`), if any.
    advice: AdvisorSeats | None = None
    # Ask the explorer for extra profiling-only workloads (`--explorer`).
    explore: bool = False
    # Holdout inputs named by `{holdout}` (`--holdout-dir`), over the manifest's.
    holdout_dir: Path | None = None
    # Where candidates are judged (`--cluster`, `waves`); None: here, one at a time.
    cluster: Cluster | None = None


class Campaign:
    def __init__(self, setting: Setting, view: View) -> None:
        self.s = setting
        self.view = view
        self.manifest = setting.loaded.manifest
        self.rules = self.manifest.rules()
        self.recorder = Recorder(setting.ledger, setting.campaign)
        target = {"name": self.manifest.target.name, "language": self.manifest.target.language}
        self.roles = Roles(setting.provider, setting.provider_name, target, self.recorder)
        self.redact = Redactor(holdout_names(setting.loaded))
        self.toolchain = toolchain_for(self.manifest, setting.sandbox, caches=setting.cache_dir)
        self.number = 0
        # Proposals being judged elsewhere while more are made (a cluster campaign's wave), as
        # the roles see them in the history.
        self.in_flight: list[dict[str, Any]] = []
        # The hot functions of each parent and why nothing was proposed for them; with the
        # heuristic proposer, every rule's outcome on every hot function.
        self.discovery = DiscoveryLog(
            setting.ledger,
            setting.campaign,
            self.manifest.target.language,
            rules=isinstance(setting.provider, HeuristicProvider),
        )
        self.advice = setting.advice
        if self.advice is not None:
            self.advice.calls.recorder = self.recorder
        self.explorer = Explorer(
            setting.loaded,
            repo=setting.repo,
            campaign=setting.campaign,
            ledger=setting.ledger,
            roles=self.roles,
            recorder=self.recorder,
        )

    # ----- the whole campaign -------------------------------------------------------------

    def run(self) -> Exit:
        """Run until an exit condition; errors end it as the "error" exit, Ctrl-C re-raises."""
        try:
            found = self._run()
        except (KeyboardInterrupt, Terminated):
            self.recorder.flush()
            self._finish(Exit(exits.INTERRUPTED, "stopped by a signal; --resume continues"))
            raise
        except SpeedproofError as exc:
            self.recorder.flush()
            found = Exit(exits.ERROR, f"{type(exc).__name__}: {exc}")
        self._finish(found)
        return found

    def _run(self) -> Exit:
        state = self.state()
        parents.sync_refs(self.s.repo, self.s.campaign, state.base_rev, [c for _, c in state.chain])
        self._settle(state)
        unstable = self._stability(self.state())
        if unstable is not None:
            return unstable
        while True:
            found = exits.check(self.state(), self.s.limits)
            if found is not None:
                return found
            found = self._on_parent(self.state().head)
            if found is not None:
                return found

    def state(self) -> CampaignState:
        return load_state(self.s.ledger, self.s.campaign, self.rules, now=datetime.now(UTC))

    def _finish(self, found: Exit) -> None:
        state = self.state()
        final = parents.cumulative_diff(self.s.repo, state.base_rev, state.head)
        (self.s.folder / FINAL_PATCH).write_text(final, encoding="utf-8", errors="surrogateescape")
        body = {"condition": found.condition, "message": found.message}
        if found.escalation:
            self.s.ledger.add_event(self.s.campaign, "escalation", body)
        self.s.ledger.add_event(self.s.campaign, "exit", {**body, "escalation": found.escalation})

    # ----- before the first candidate -----------------------------------------------------

    def _stability(self, state: CampaignState) -> Exit | None:
        body = state.stability
        if body is None and not self.s.stability_check:
            body = {"what": "a/a", "verdict": "skipped", "reasons": ["--no-stability-check"]}
            self.s.ledger.add_event(self.s.campaign, "note", body)
            self.view.say("A/A check skipped (--no-stability-check)")
        if body is None:
            result = check_stability(
                self.s.loaded,
                sandbox=self.s.sandbox,
                repo=self.s.repo,
                rev=state.base_rev,
                cache_dir=self.s.cache_dir,
                progress=self.view.stage,
                on_sample=self.view.sample,
                holdout_dir=self.s.holdout_dir,
            )
            body = result.to_record()
            self.s.ledger.add_event(self.s.campaign, "note", body)
            self.view.say(
                f"A/A check (base against itself): {result.verdict}, {result.pairs} pairs"
            )
        return exits.unstable(body)

    def _settle(self, state: CampaignState) -> None:
        """Finish what a killed session left: an accept not yet linked, candidates not judged."""
        pending = state.pending_accept()
        if pending is not None:
            self._link(state, pending.candidate_id, pending.diff, pending.hypothesis)
        for attempt in self.state().unfinished():
            self._resettle(attempt)

    def _resettle(self, attempt: Attempt) -> None:
        ledger = self.s.ledger
        if attempt.needs_finishing:
            reason = attempt.rejection or "the proposal could not be used"
            ledger.finish(
                attempt.candidate_id,
                verdict="rejected",
                reasons=[f"named rejection: {reason}"],
                rests_on=None,
                lane=None,
                timings={},
            )
            return
        state = self.state()
        if attempt.base_rev != state.head:
            note = {"what": "abandoned", "candidate": attempt.candidate_id}
            ledger.add_event(self.s.campaign, "note", note)
            return
        self.view.say(f"judging candidate #{attempt.candidate_id} again from its recorded diff")
        event = {
            "function": attempt.function,
            "hypothesis": attempt.hypothesis,
            "rule": attempt.rule,
            "invalid": False,
            "diff_sha256": attempt.diff_sha256,
            "parent": state.head,
            "review": None
            if attempt.objected is None
            else {"recommendation": "reconsider" if attempt.objected else "proceed"},
            "rejudge_of": attempt.candidate_id,
        }
        self.number = len(state.settled()) + 1
        self.recorder.expect_candidate(event, [])
        outcome = self._judged(self._judge(state.head), attempt.diff, event)
        if outcome.verdict.verdict == "accepted":
            self._link(self.state(), outcome.ledger_id, attempt.diff, attempt.hypothesis)

    # ----- one parent revision ------------------------------------------------------------

    def _on_parent(self, head: str) -> Exit | None:
        """Iterations against `head` until an accept (None: go on from the new head) or an exit."""
        self.view.stage("discovery", f"profiling {head[:12]}")
        with parent_tree(
            self.s.loaded,
            repo=self.s.repo,
            rev=head,
            sandbox=self.s.sandbox,
            toolchain=self.toolchain,
        ) as tree:
            parent = self._profiled(tree)
            self._show_profile(parent)
            self.view.stage("discovery", f"recording the hot functions of {head[:12]}")
            self.discovery.profiled(parent)
            flags = self._flags(parent)
            judge = self._judge(parent.rev)
            while True:
                state = self.state()
                found = exits.check(state, self.s.limits)
                if found is not None:
                    return found
                try:
                    step = self._step(state, parent, judge, flags)
                finally:
                    self.recorder.flush()
                if isinstance(step, Exit):
                    return step
                if step:
                    return None

    def _profiled(self, tree: ParentTree) -> ParentCheckout:
        if not self.s.explore:
            return tree.profiled()
        asked = self.state().exploration
        if asked is None:
            self.view.stage("explorer", "asking for workloads that widen profiling")
        parent = self.explorer.profiled(tree, asked)
        extra = [w for w in parent.profile.workloads if not self._in_manifest(w)]
        self.view.say(f"profiled with explorer workloads: {', '.join(extra) or 'none'}")
        return parent

    def _in_manifest(self, workload: str) -> bool:
        return any(w.id == workload for w in self.manifest.workloads)

    def _flags(self, parent: ParentCheckout) -> AdvisorFlags | None:
        """The advisor's cause flags at this parent when it is the analyst, else None."""
        if self.advice is None or not self.advice.analyst:
            return None
        known = self.state().advice.get(parent.rev)
        if known is None:
            self.view.stage("advisor", f"cause questions about {parent.rev[:12]}")
        try:
            flags = self.advice.flags(parent, known, ledger=self.s.ledger, campaign=self.s.campaign)
        finally:
            self.recorder.flush()
        standing = [f"{f.function} {f.top.cause}" for f in flags.functions if f.top is not None]
        self.view.say(f"advisor {flags.model} flags: {', '.join(standing) or 'none'}")
        return flags

    def _show_profile(self, parent: ParentCheckout) -> None:
        top = ", ".join(f"{f.name} {f.self_pct:.0f}%" for f in parent.profile.functions[:3])
        self.view.say(f"hot functions at {parent.rev[:12]}: {top or 'none'}")

    def _judge(self, rev: str) -> Judge:
        options = JudgeOptions(
            base=rev,
            origin=ORIGIN,
            campaign=self.s.campaign,
            cache_dir=self.s.cache_dir,
            holdout_dir=self.s.holdout_dir,
        )
        return Judge(
            self.s.loaded,
            sandbox=self.s.sandbox,
            ledger=self.s.ledger,
            options=options,
            progress=self._stage,
            on_sample=self.view.sample,
        )

    def _stage(self, name: str, message: str) -> None:
        self.view.stage(f"candidate {self.number} {name}", message)

    # ----- one iteration ------------------------------------------------------------------

    def _step(
        self,
        state: CampaignState,
        parent: ParentCheckout,
        judge: Judge,
        flags: AdvisorFlags | None,
    ) -> Exit | bool:
        """What the loop does next against `parent` (here, one proposal to a verdict; a wave on
        a cluster, `waves.ClusterCampaign`): an Exit, True after an accept, False otherwise."""
        self.number = state.spent.candidates + 1
        proposal = self._proposal(state, parent, flags)
        if not isinstance(proposal, Proposal):
            return proposal
        repeated = exits.repeated(state, proposal.function.name, proposal.diff_sha256)
        if repeated is not None:
            return repeated
        event = self._review(parent, proposal)
        outcome = self._judged(judge, proposal.patch, event)
        if outcome.verdict.verdict != "accepted":
            return False
        self._link(self.state(), outcome.ledger_id, proposal.patch, proposal.answer.hypothesis)
        return True

    def _history(self, state: CampaignState) -> list[dict[str, Any]]:
        """The attempts a role is shown: the ledger's, then any still being judged."""
        return [*state.history(self.redact), *self.in_flight]

    def _proposal(
        self, state: CampaignState, parent: ParentCheckout, flags: AdvisorFlags | None
    ) -> Exit | Proposal | bool:
        """The coordinator's pick changed by the optimizer: a Proposal, an Exit, or False when
        the turn ended without one (a named rejection, no rule for the function)."""
        function = self._choose(state, parent, flags)
        if not isinstance(function, HotFunction):
            return function
        proposal = self._propose(state, parent, function, flags)
        return False if proposal is None else proposal

    def _choose(
        self, state: CampaignState, parent: ParentCheckout, flags: AdvisorFlags | None
    ) -> Exit | HotFunction | bool:
        """The coordinator's pick: a hot function, an Exit, or False after a named rejection."""
        hot = parent.hot(state.exhausted(parent.rev))
        if not hot:
            message = "no hot function is left that a rewrite applies to"
            self.discovery.outcome(EVERY_FUNCTION, "campaign", message)
            return Exit(exits.NOTHING_LEFT, message)
        if flags is not None:
            hot = rank(hot, flags)
        self._stage("coordinator", "choosing a function")
        choice = self.roles.coordinator(
            [f.view(with_source=True) for f in hot],
            self._history(state),
            state.flags(parent.rev) if flags is None else flags.cause_views(),
        )
        if choice.nothing_left:
            self.discovery.outcome(EVERY_FUNCTION, "coordinator", choice.rationale)
            return Exit(exits.NOTHING_LEFT, f"the coordinator has nothing left: {choice.rationale}")
        function = parent.find(choice.function or "", hot)
        if choice.rejection is not None or function is None:
            reason = choice.rejection or (
                f"coordinator-unknown-function: {choice.function!r} is not in the hot list"
            )
            self._reject(parent.rev, function="", reason=reason, gate="answer")
            return False
        return function

    def _propose(
        self,
        state: CampaignState,
        parent: ParentCheckout,
        function: HotFunction,
        flags: AdvisorFlags | None,
    ) -> Proposal | None:
        if flags is None:
            causes = self._causes(state, parent, function)
        else:
            causes = flags.cause_views(function.name)
        self._stage("optimizer", f"changing {function.name}")
        try:
            found = self.roles.optimizer(
                function=function.view(with_source=True),
                file={"path": function.file, "source": parent.file_text(function.file)},
                history=self._history(state),
                concerns=[self.redact(c) for c in state.concerns],
                causes=causes,
            )
        except NoRuleApplies as exc:
            self._no_rule(parent.rev, function.name, exc)
            return None
        if found.value is None:
            reason = found.rejection or "optimizer answer unusable"
            self._reject(parent.rev, function=function.name, reason=reason, gate="answer")
            return None
        answer = cast(OptimizerAnswer, found.value)
        try:
            edit = answer_to_patch(
                answer,
                worktree=parent.worktree,
                target_rel=parent.target_rel,
                language=self.manifest.target.language,
            )
        except EditRejected as exc:
            self._reject(
                parent.rev,
                function=function.name,
                reason=f"edit {exc}",
                gate="edit",
                answer=answer,
            )
            return None
        patch = normalise_patch(edit.patch)
        return Proposal(function, answer, patch, sha256(patch))

    def _no_rule(self, parent_rev: str, function: str, exc: NoRuleApplies) -> None:
        rules = list(exc.rules) or ["(any)"]
        note = {
            "what": "no-rule",
            "parent": parent_rev,
            "function": function,
            "rules": rules,
            "message": str(exc),
        }
        self.s.ledger.add_event(self.s.campaign, "note", note)
        self.discovery.outcome(function, "optimizer", str(exc))
        self.view.say(f"no rewrite for {function}: {exc}")

    def _causes(
        self, state: CampaignState, parent: ParentCheckout, function: HotFunction
    ) -> list[dict[str, Any]]:
        """The analyst's causes for `function` at this parent: asked once, then remembered."""
        known = state.causes.get((parent.rev, function.name))
        if known is not None:
            return known
        self._stage("analyst", f"naming causes in {function.name}")
        causes, rejection = self.roles.analyst(function.view(with_source=True))
        self._note_causes(parent.rev, function.name, causes, rejection)
        return causes

    def _note_causes(
        self, parent_rev: str, function: str, causes: list[dict[str, Any]], rejection: str | None
    ) -> None:
        note = {
            "what": "causes",
            "parent": parent_rev,
            "function": function,
            "causes": causes,
            "rejection": rejection,
        }
        self.s.ledger.add_event(self.s.campaign, "note", note)

    def _review(self, parent: ParentCheckout, proposal: Proposal) -> dict[str, Any]:
        """The reviewer's (or the advisor's) turn; the recorder then expects the candidate row,
        and the "candidate" event it will carry is returned."""
        if self.advice is not None and self.advice.reviewer:
            self._stage("advisor", "hazard questions about the change")
            hazards = self.advice.hazards(parent, proposal.patch, proposal.function)
            flagged = ", ".join(f"{h.hazard} ({h.severity})" for h in hazards.flagged)
            self.view.say(f"advisor hazards in candidate {self.number}: {flagged or 'none'}")
            event = judged_event(parent.rev, proposal, review_summary(hazards), None)
            self.recorder.expect_candidate(event, [], hazards)
            return event
        answer = proposal.answer
        self._stage("reviewer", "arguing against the change")
        review = self.roles.reviewer(
            diff=proposal.patch,
            function=proposal.function.view(with_source=True),
            hypothesis=answer.hypothesis,
        )
        concerns: list[PendingConcern] = []
        summary = None
        if review.value is not None:
            reviewed = cast(ReviewerAnswer, review.value)
            concerns = [PendingConcern(c.severity, c.text) for c in reviewed.concerns]
            summary = {
                "recommendation": reviewed.recommendation,
                "concerns": [c.severity for c in reviewed.concerns],
            }
        event = judged_event(parent.rev, proposal, summary, review.rejection)
        self.recorder.expect_candidate(event, concerns)
        return event

    def _judged(self, judge: Judge, patch: str, event: dict[str, Any]) -> Outcome:
        """Judge `patch`; the recorder already expects its candidate row."""
        outcome = judge.judge(patch)
        verdict = outcome.verdict
        reason = verdict.reasons[0] if verdict.reasons else ""
        self.view.say(
            f"candidate {self.number} (#{outcome.ledger_id}) {event['function']}"
            + (f" [{event['rule']}]" if event.get("rule") else "")
            + f": {verdict.verdict.upper()} - {reason}"
        )
        return outcome

    def _reject(
        self,
        parent_rev: str,
        *,
        function: str,
        reason: str,
        gate: str,
        answer: OptimizerAnswer | None = None,
    ) -> None:
        """A named rejection (`candidate_events`): the proposal is recorded as a candidate that
        was never judged."""
        self.recorder.expect_candidate(rejection_event(parent_rev, function, answer), [])
        candidate_id = record_rejection(
            self.s.ledger,
            origin=ORIGIN,
            campaign=self.s.campaign,
            target=self.manifest.target.name,
            repo=self.s.repo,
            sandbox=self.s.sandbox.name,
            parent_rev=parent_rev,
            diff=unjudged_diff(answer),
            reason=reason,
            gate=gate,
        )
        self.view.say(f"candidate {self.number} (#{candidate_id}): REJECTED (named) - {reason}")

    # ----- the accepted chain -------------------------------------------------------------

    def _link(self, state: CampaignState, candidate_id: int, patch: str, hypothesis: str) -> None:
        """Make an accepted candidate the next parent: a commit, the refs, the event."""
        parent = state.head
        index = len(state.chain) + 1
        message = (
            f"speedproof campaign {self.s.campaign}: candidate {candidate_id}\n\n{hypothesis}\n"
        )
        commit = parents.commit_candidate(self.s.repo, parent, patch, message)
        parents.record_link(self.s.repo, self.s.campaign, index, commit)
        self.s.ledger.add_event(
            self.s.campaign,
            "accepted",
            {"commit": commit, "parent": parent, "index": index},
            candidate_id=candidate_id,
        )
        final = parents.cumulative_diff(self.s.repo, state.base_rev, commit)
        (self.s.folder / FINAL_PATCH).write_text(final, encoding="utf-8", errors="surrogateescape")
        self.view.say(
            f"accepted #{candidate_id} is now the parent: {parents.ref(self.s.campaign, 'head')}"
            f" = {commit[:12]}"
        )


def describe(found: Exit) -> str:
    kind = "ESCALATION" if found.escalation else "exit"
    return f"{kind}: {found.condition}: {found.message}"
