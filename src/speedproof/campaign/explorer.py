"""The explorer in the loop: extra workloads that widen profiling, never measured for a verdict.

Asked once a campaign, at its first parent revision (`--explorer`): what it may propose, other
flags on the inputs the listed workloads read, does not depend on which revision is the parent,
and one call keeps the cost bounded and the profiled workloads the same at every parent, so the
hot lists of successive parents stay comparable. It is shown the non-holdout workloads and the
hot list of a first profile on the representative workloads.

Each proposal is screened (`screening`) and then run once (`ParentTree.probe`); the accepted
ones are profiled together with the representative workloads, at that parent and at every
later one, where each is run once again first and dropped for that parent if it fails. One
"explorer" event records every proposal, accepted or refused with its reason ("proposals");
one more per parent names the workloads profiled and any dropped ("profiled"). The explorer's
role calls are written at once, with no candidate: they belong to the campaign.

Nothing here reaches the judge: it is built from the user's manifest (`loop.Campaign._judge`),
and the widened manifest exists only inside `ParentTree.profiled`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from speedproof.agents.answers import ExplorerAnswer
from speedproof.campaign.checkout import ParentCheckout, ParentTree
from speedproof.campaign.records import CampaignLedger, Recorder
from speedproof.campaign.roles_step import Roles
from speedproof.campaign.screening import (
    Screen,
    Screened,
    profiling_workload,
    shown_workloads,
    workload_record,
)
from speedproof.manifest import Workload
from speedproof.manifest_loading import LoadedManifest

EVENT_KIND = "explorer"


def accepted_workloads(body: dict[str, Any]) -> list[Workload]:
    """The workloads a "proposals" event accepted, as discovery runs them."""
    return [profiling_workload(record) for record in body.get("accepted", [])]


class Explorer:
    def __init__(
        self,
        loaded: LoadedManifest,
        *,
        repo: Path,
        campaign: str,
        ledger: CampaignLedger,
        roles: Roles,
        recorder: Recorder,
    ) -> None:
        self.loaded = loaded
        self.repo = repo
        self.campaign = campaign
        self.ledger = ledger
        self.roles = roles
        self.recorder = recorder

    def profiled(self, tree: ParentTree, asked: dict[str, Any] | None) -> ParentCheckout:
        """The parent profiled on its representative workloads and the explorer's; the explorer
        is asked first when it never was (`asked` is the campaign's "proposals" event)."""
        if asked is None:
            return self._explore(tree)
        return self._widened(tree, accepted_workloads(asked))

    def _explore(self, tree: ParentTree) -> ParentCheckout:
        first = tree.profiled()
        hot = [f.view(with_source=False) for f in first.profile.functions]
        found = self.roles.explorer(shown_workloads(self.loaded.manifest), hot)
        screened: list[Screened] = []
        if found.value is not None:
            screen = Screen(self.loaded, repo=self.repo, target_root=tree.target_root)
            screened = screen.screen(cast(ExplorerAnswer, found.value).workloads)
        screened = self._tried(tree, screened)
        accepted = [s.workload for s in screened if s.workload is not None]
        body = {
            "what": "proposals",
            "parent": tree.rev,
            "proposals": [s.to_record() for s in screened],
            "accepted": [workload_record(w) for w in accepted],
            "rejection": found.rejection,
        }
        self.ledger.add_event(self.campaign, EVENT_KIND, body)
        self.recorder.flush()
        return self._profiled_with(tree, accepted, {}) if accepted else first

    def _tried(self, tree: ParentTree, screened: list[Screened]) -> list[Screened]:
        failed = tree.probe([s.workload for s in screened if s.workload is not None])
        return [
            s.refused(failed[s.proposal.id]) if s.proposal.id in failed else s for s in screened
        ]

    def _widened(self, tree: ParentTree, workloads: Sequence[Workload]) -> ParentCheckout:
        if not workloads:
            return tree.profiled()
        failed = tree.probe(workloads)
        kept = [w for w in workloads if w.id not in failed]
        return self._profiled_with(tree, kept, failed)

    def _profiled_with(
        self, tree: ParentTree, workloads: Sequence[Workload], dropped: dict[str, str]
    ) -> ParentCheckout:
        parent = tree.profiled(workloads)
        body = {
            "what": "profiled",
            "parent": tree.rev,
            "workloads": list(parent.profile.workloads),
            "extra": [w.id for w in workloads],
            "dropped": [{"id": key, "reason": why} for key, why in dropped.items()],
        }
        self.ledger.add_event(self.campaign, EVENT_KIND, body)
        return parent
