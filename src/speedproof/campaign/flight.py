"""The jobs of one cluster wave, each on its node: sent, moved off a lost node, brought back.

A timed job is pinned to its node and holds that node's measurement slot (`measuring_on`), so
when its node is lost (a machine down, its raylet killed) Ray cannot run it anywhere else and
hands back an error. The flight then asks the cluster which measuring nodes are alive: if the
job's node is not among them, the same job (same dispatch, same patch, same parent) goes to the
live node with the fewest of this wave's jobs, holding that node's slot like any other, and
only its result is ever landed. Nothing reached the ledger from the lost attempt (a node only
returns its writes), so each dispatched proposal still lands exactly once, without `--resume`.
A job whose node is alive failed for a reason of its own and comes back as it is. The moves are
bounded: each needs one more node to have died, and none is made once no measuring node lives.

A job carries its parent's bundle only to a node that has not been sent it (`Shipments`); a node
that answers `BundleMissing` gets the same job again with the bytes, once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

from speedproof.cluster.bundle_cache import BundleMissing, Shipments
from speedproof.cluster.errors import ClusterError
from speedproof.cluster.jobs import Batch, Cluster, Finished, NodeInfo, measuring_on
from speedproof.cluster.judging import Judged, JudgeJob, measuring_nodes


class Numbered(Protocol):
    @property
    def number(self) -> int: ...


D = TypeVar("D", bound=Numbered)


@dataclass(frozen=True)
class Sent(Generic[D]):
    dispatch: D
    job: JudgeJob
    node: NodeInfo
    # Sent again with the bytes after the node answered BundleMissing.
    reshipped: bool = False


class Flight(Generic[D]):
    """The jobs of one wave on `cluster`'s measuring `nodes`; `say` tells the user of a move."""

    def __init__(
        self,
        batch: Batch[JudgeJob, Judged],
        cluster: Cluster,
        nodes: list[NodeInfo],
        shipments: Shipments,
        say: Callable[[str], None],
    ) -> None:
        self.batch = batch
        self.cluster = cluster
        self.nodes = nodes
        self.shipments = shipments
        self.say = say
        self.sent: dict[int, Sent[D]] = {}

    def __len__(self) -> int:
        return len(self.sent)

    @property
    def dispatches(self) -> list[D]:
        return [sent.dispatch for sent in self.sent.values()]

    def send(self, dispatch: D, job: JudgeJob) -> NodeInfo:
        """Send `job` to the node with the fewest of this wave's jobs (the first on a tie): one
        node each while a wave has no more jobs than nodes; more queue on the nodes' slots."""
        load = {node.id: 0 for node in self.nodes}
        for sent in self.sent.values():
            load[sent.node.id] = load.get(sent.node.id, 0) + 1
        node = min(self.nodes, key=lambda n: load[n.id])
        self._submit(Sent(dispatch, job, node))
        return node

    def _submit(self, sent: Sent[D]) -> None:
        job, node = sent.job, sent.node
        digest = job.bundle_digest
        if job.bundle is not None and digest and not self.shipments.needs(node.id, digest):
            job = replace(job, bundle=None)  # the node has it
        elif job.bundle is not None and digest:
            self.shipments.shipped(node.id, digest, len(job.bundle))
            self.say(
                f"shipping the bundle of {job.base_rev[:12]} ({len(job.bundle) / 1024:.0f} KiB) "
                f"to node {node.id[:12]}"
            )
        self.sent[self.batch.submit(job, measuring_on(node))] = sent

    def results(self) -> Iterator[tuple[D, NodeInfo, Finished[Judged]]]:
        """Each job's outcome once, a lost node's jobs judged elsewhere first."""
        while self.batch.pending:
            finished = self.batch.next_finished()
            sent = self.sent.pop(finished.job)
            if finished.value is None and self._sent_again(sent, finished.error or ""):
                continue
            yield sent.dispatch, sent.node, finished

    def _sent_again(self, sent: Sent[D], error: str) -> bool:
        if error.startswith(BundleMissing.__name__) and not sent.reshipped:
            self.shipments.forget(sent.node.id, sent.job.bundle_digest)
            self._submit(replace(sent, reshipped=True))
            return True
        try:
            live = measuring_nodes(self.cluster)
        except ClusterError:
            return False  # no measuring node is left: the error stands
        if any(node.id == sent.node.id for node in live):
            return False  # its node is alive: the job failed for a reason of its own
        self.nodes = live
        lost = sent.node.id[:12]
        node = self.send(sent.dispatch, sent.job)
        self.say(
            f"node {lost} lost: candidate {sent.dispatch.number} is judged on node {node.id[:12]}"
        )
        return True
