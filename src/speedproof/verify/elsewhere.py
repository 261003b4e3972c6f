"""`speedproof verify --cluster SPEC --elsewhere`: each accepted candidate measured again on
another node than the one that accepted it.

An accept proves a candidate faster on one machine. A win can rest on what only that machine
has (a CPU feature, a library build, a cache size, an environment), and a campaign on a cluster
accepts on whichever node was free. Here each accepted candidate that a cluster judged (its
ledger row carries `facts["node"]`, `cluster.judging`) is judged again, alone, against the base
it was accepted on, on a node with a measurement slot other than that one: the whole path,
baseline and candidate built, tested and measured in pairs on that node, under the judge's
sequential rule with twice its budget (or `--pairs`), as `verify` does. The candidates go out in
parallel, one job per candidate, spread over the other nodes.

Each result is recorded like verify's other rechecks: the re-judgement is a candidate row of
origin "verify" (with its own node's facts), and a "verified" or "no-longer-holds" event next
to the original names both machines (`accepted_on`, `measured_on`). A candidate without node
facts (judged without `--cluster`), or a cluster with no other node that offers a measurement
slot, is an error naming why: never a quiet re-measurement on the same node.

Elsewhere means another host, not only another node: two Ray nodes can share one machine. A
host is named by its kernel's boot id (`cluster.node_probe`, shared by the containers of one
machine), which both nodes' facts record. A node on another host is chosen when there is one;
when there is none, the re-measurement still runs and its result says it was not elsewhere
(`elsewhere` false, and `verify` exits 1), as it does when either node's host is not known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speedproof.cluster.jobs import Cluster, Finished, NodeInfo, measuring_on
from speedproof.cluster.judging import Judged, Shipper, judge_on_node, measuring_nodes
from speedproof.ground.errors import InfrastructureError, SpeedproofError
from speedproof.judge.evaluate import JudgeOptions
from speedproof.judge.measure.sequential_rule import Progress, say_nothing
from speedproof.ledger import Ledger
from speedproof.manifest_loading import LoadedManifest
from speedproof.verify.verification import Accepted, Recheck, verify_options


class NoOtherNode(SpeedproofError):
    """No node can re-measure a candidate elsewhere than where it was accepted."""


@dataclass(frozen=True)
class Elsewhere:
    """One candidate re-measured on another node: the recheck, and both machines' facts."""

    check: Recheck
    accepted_on: dict[str, Any]
    measured_on: dict[str, Any]

    @property
    def holds(self) -> bool:
        return self.check.holds

    @property
    def elsewhere(self) -> bool:
        """Whether it was measured on another host than the one that accepted it."""
        return other_host(self.accepted_on, self.measured_on)

    @property
    def proven(self) -> bool:
        """It held, and on another host."""
        return self.holds and self.elsewhere

    def to_json(self) -> dict[str, Any]:
        return {
            **self.check.to_json(),
            "elsewhere": self.elsewhere,
            "accepted_on": self.accepted_on,
            "measured_on": self.measured_on,
        }


def host_key(facts: dict[str, Any]) -> str | None:
    """The host a node's facts name (`node_probe.host_facts`), None when they do not."""
    host = facts.get("host")
    key = host.get("key") if isinstance(host, dict) else None
    return str(key) if key else None


def other_host(accepted: dict[str, Any], measured: dict[str, Any]) -> bool:
    """Both hosts known and different."""
    first, second = host_key(accepted), host_key(measured)
    return first is not None and second is not None and first != second


def accepted_on(candidates: Sequence[Accepted]) -> dict[int, dict[str, Any]]:
    """The node facts each candidate's accept recorded; a SpeedproofError naming those
    without any (judged without --cluster: where they were accepted is not known)."""
    found = {c.id: c.node for c in candidates if c.node is not None}
    missing = [c.id for c in candidates if c.node is None]
    if missing:
        raise NoOtherNode(
            f"candidate(s) {', '.join(map(str, missing))} have no node facts: they were judged "
            "without --cluster, so the node that accepted them is not known and --elsewhere "
            "cannot choose another"
        )
    return found


def other_nodes(
    nodes: Sequence[NodeInfo], accepted: dict[str, Any], candidate: int
) -> list[NodeInfo]:
    """The measuring nodes other than the one that accepted `candidate`; an error if none."""
    others = [node for node in nodes if node.id != accepted["id"]]
    if not others:
        names = ", ".join(node.id for node in nodes)
        raise NoOtherNode(
            f"no other node offers a measurement slot: the cluster's measuring node(s) ({names}) "
            f"include only the one that accepted candidate {candidate}, and --elsewhere never "
            "re-measures where a candidate was accepted; add a node (`ray start --address … "
            "--resources '{\"speedproof_slot\": 1}'`)"
        )
    return others


class ElsewhereVerification:
    """Re-judges accepted candidates on other nodes of `cluster`, in parallel."""

    def __init__(
        self,
        loaded: LoadedManifest,
        *,
        cluster: Cluster,
        ledger: Ledger,
        unsandboxed: bool = False,
        pairs: int | None = None,
        holdout_dir: Path | None = None,
        progress: Progress = say_nothing,
    ) -> None:
        self.cluster = cluster
        self.ledger = ledger
        self.pairs = pairs
        self.progress = progress
        self.shipper = Shipper(loaded, unsandboxed=unsandboxed, holdout_dir=holdout_dir)

    def run(self, accepted: Sequence[Accepted]) -> list[Elsewhere]:
        if not accepted:
            raise SpeedproofError("no accepted candidate to verify in this ledger")
        where = accepted_on(accepted)
        nodes = measuring_nodes(self.cluster)
        plan = []
        for index, candidate in enumerate(accepted):
            others = other_nodes(nodes, where[candidate.id], candidate.id)
            apart = [node for node in others if node.host != host_key(where[candidate.id])]
            choice = apart or others  # a node on the same host: the result says so
            plan.append((candidate, choice[index % len(choice)]))
        results = self._judge_all(plan)
        found: list[Elsewhere] = []
        failures: list[str] = []
        for index, (candidate, node) in enumerate(plan):
            try:
                found.append(self._record(candidate, where[candidate.id], node, results[index]))
            except InfrastructureError as exc:
                failures.append(str(exc))
        if failures:
            raise InfrastructureError("; ".join(failures))
        return found

    def _judge_all(self, plan: list[tuple[Accepted, NodeInfo]]) -> dict[int, Finished[Judged]]:
        with self.cluster.batch(judge_on_node) as batch:
            for candidate, node in plan:
                self.progress("verify", f"candidate {candidate.id} on node {node.id[:12]}")
                batch.submit(
                    self.shipper.job(candidate.diff, self._options(candidate)), measuring_on(node)
                )
            done = [batch.next_finished() for _ in plan]
        return {finished.job: finished for finished in done}

    def _options(self, candidate: Accepted) -> JudgeOptions:
        return verify_options(candidate.base_rev, self.pairs, candidate.campaign)

    def _record(
        self,
        candidate: Accepted,
        accepted: dict[str, Any],
        node: NodeInfo,
        finished: Finished[Judged],
    ) -> Elsewhere:
        judged = finished.value
        if judged is None:
            raise InfrastructureError(
                f"re-measuring candidate {candidate.id} on node {node.id} failed: {finished.error}"
            )
        ledger_id = self.shipper.land(judged, self.ledger)
        if judged.error is not None:
            raise InfrastructureError(
                f"re-measuring candidate {candidate.id} on node {node.id} failed (candidate "
                f"{ledger_id}): {judged.error}"
            )
        check = Recheck(
            "elsewhere",
            (candidate.id,),
            candidate.base_rev,
            str(judged.verdict),
            judged.verdict == "accepted",
            ledger_id,
            judged.figure,
            judged.reasons,
        )
        found = Elsewhere(check, accepted, judged.node)
        if not found.elsewhere:
            self.progress(
                "verify",
                f"candidate {candidate.id} was re-measured on node {node.id[:12]}, on the same "
                "host as the node that accepted it (or a host not known): not elsewhere",
            )
        kind = "verified" if found.holds else "no-longer-holds"
        self.ledger.add_event(candidate.campaign, kind, found.to_json(), candidate_id=candidate.id)
        return found
