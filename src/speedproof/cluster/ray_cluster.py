"""The Ray back end: jobs as Ray tasks on a running Ray cluster (the optional `ray` extra).

Imported only when a command or a caller asks for Ray; `spec.open_cluster` turns a missing Ray
into a one-line error naming the extra. Each job is one task with `max_retries=MAX_RETRIES`:
when its worker process or its node dies, Ray runs it again elsewhere, and the driver sees one
value per job whatever happened on the way. Exceptions raised by the task are caught in the
worker and returned as the job's outcome, so Ray never retries those.

Preflight (`RayCluster.preflight`, which `open_cluster` runs): one small task pinned to each
node checks it (`cluster.preflight`); from then on `nodes()` lists only the nodes that passed,
and every job is pinned to one of them, the least loaded for its CPUs, so Ray's scheduler never
sends work to a node left out. A job whose task fails for the cluster's sake (its node died, its
worker could not load it) is run again on another checked node it has not tried, at most
`ELSEWHERE_RETRIES` times; a job the caller pinned stays where it was pinned.

Placement: a pinned job gets a hard `NodeAffinitySchedulingStrategy` for its node; a job that
holds a measurement slot asks for one unit of the `speedproof_slot` resource, which a node
offers once (`ray start --resources '{"speedproof_slot": 1}'`), so the scheduler itself keeps
slot-holding jobs one at a time per node; a job's `cpus` become its `num_cpus`, so a timed job
that reserves all of its node's CPUs leaves none for any other task there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Generic

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from speedproof.cluster import node_probe
from speedproof.cluster.errors import ClusterError, ClusterUnavailable
from speedproof.cluster.jobs import (
    ELSEWHERE_RETRIES,
    MAX_RETRIES,
    SLOT_RESOURCE,
    Batch,
    Cluster,
    Finished,
    NodeInfo,
    P,
    Placement,
    R,
    Ran,
    describe,
    run_task,
)
from speedproof.cluster.preflight import (
    PROBE_TIMEOUT_S,
    Needs,
    Preflight,
    announce,
    judge_nodes,
)
from speedproof.cluster.ray_connect import open_connection

# Ray Client's proxy starts one server process per connection, forked from one of its gRPC
# threads; that fork can die before it runs anything (seen once: no output, 20 ms after the
# fork, "Starting Ray client server failed"), and the proxy reports it as an aborted
# connection. A new connection gets a new server, so an aborted one is tried again, at most
# this many times in all; any other failure is final at once.
CONNECT_ATTEMPTS = 3
LOGGER = logging.getLogger("speedproof.cluster")


def connect(init: Callable[[], object], attempts: int = CONNECT_ATTEMPTS) -> None:
    """Run `init`, again after a `ConnectionAbortedError`, `attempts` times at most; the last
    attempt's error is raised with the count of attempts made."""
    for attempt in range(1, attempts + 1):
        try:
            init()
            return
        except ConnectionAbortedError as exc:
            if attempt == attempts:
                raise ConnectionAbortedError(f"{exc} (after {attempts} attempts)") from exc
            logging.getLogger(__name__).warning("Ray Client connection aborted; trying again")


def node_resources(node: str) -> dict[str, float]:
    """The resources Ray node `node` offers (empty when it is not a live node)."""
    for found in ray.nodes():  # type: ignore[no-untyped-call]
        if found.get("NodeID") == node and found.get("Alive"):
            return {str(k): float(v) for k, v in found["Resources"].items()}
    return {}


def _run_on_ray(task: Callable[[P], R], payload: P) -> Ran[R]:
    return run_task(task, payload, ray.get_runtime_context().get_node_id())


class RayCluster(Cluster):
    """Jobs on the Ray cluster at `address` (`auto`: the one `ray start` left on this machine,
    or RAY_ADDRESS; `ray://HOST:PORT`: through Ray Client)."""

    name = "ray"

    def __init__(self, address: str = "auto") -> None:
        # A process already connected (a trainer that runs on Ray, a test's cluster) keeps its
        # connection: this cluster neither opens nor closes it.
        self._owned = not ray.is_initialized()
        if self._owned:
            try:
                open_connection(
                    address,
                    lambda: connect(
                        lambda: ray.init(address=address, logging_level=logging.WARNING)
                    ),
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ClusterUnavailable(
                    f"no Ray cluster answers at {address!r} ({describe(exc)}); start one with "
                    "`ray start --head` or set RAY_ADDRESS"
                ) from exc
        self.remote: Any = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_run_on_ray)
        # Node id -> host key of the nodes that passed the preflight; None before it ran.
        self._checked: dict[str, str] | None = None
        self.checked: Preflight | None = None

    @property
    def slots(self) -> int:
        return max(1, int(sum(node.cpus for node in self.nodes()) or 1))

    def batch(self, task: Callable[[P], R]) -> Batch[P, R]:
        return RayBatch(self, task)

    def _alive(self) -> list[NodeInfo]:
        return [
            NodeInfo(
                id=str(node["NodeID"]),
                address=str(node["NodeManagerAddress"]),
                cpus=float(node["Resources"].get("CPU", 0.0)),
                slots=int(node["Resources"].get(SLOT_RESOURCE, 0)),
            )
            for node in ray.nodes()  # type: ignore[no-untyped-call]
            if node.get("Alive")
        ]

    def nodes(self) -> list[NodeInfo]:
        alive = self._alive()
        if self._checked is None:
            return alive
        return [
            replace(node, host=self._checked[node.id]) for node in alive if node.id in self._checked
        ]

    def preflight(self, needs: Needs) -> Preflight:
        """Check every live node against `needs`; keep only those that pass (see the module
        docstring). A NoCheckedNode when none does."""
        nodes = self._alive()
        outcome = judge_nodes(nodes, self._probe(nodes, needs), needs)
        announce(outcome)
        self._checked = {check.node.id: check.host for check in outcome.kept}
        self.checked = outcome
        return outcome

    def _probe(self, nodes: list[NodeInfo], needs: Needs) -> dict[str, dict[str, Any] | None]:
        # Shipped by value: a node without speedproof still runs it and says so.
        ray.cloudpickle.register_pickle_by_value(node_probe)  # type: ignore[no-untyped-call]
        remote = ray.remote(num_cpus=0, max_retries=0)(node_probe.probe)
        refs = {
            remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node.id, soft=False)
            ).remote(needs.digest_module, needs.tools): node.id
            for node in nodes
        }
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=PROBE_TIMEOUT_S)
        reports: dict[str, dict[str, Any] | None] = {refs[ref]: None for ref in late}
        for ref in ready:
            try:
                reports[refs[ref]] = dict(ray.get(ref))
            except ray.exceptions.RayError as exc:
                reports[refs[ref]] = {"error": describe(exc)}
        for ref in late:
            ray.cancel(ref, force=True)
        return reports

    def options(self, placement: Placement) -> dict[str, Any]:
        """Ray task options for `placement`; refuses a node or a slot the cluster lacks, which
        Ray would otherwise leave waiting for ever."""
        options: dict[str, Any] = {}
        nodes = self.nodes()
        if placement.node is not None:
            pinned = next((node for node in nodes if node.id == placement.node), None)
            if pinned is None:
                raise ClusterError(f"the Ray cluster has no live node {placement.node!r}")
            if placement.cpus is not None and placement.cpus > pinned.cpus:
                raise ClusterError(
                    f"node {placement.node} has {pinned.cpus:g} CPUs, not the "
                    f"{placement.cpus:g} a job asked for"
                )
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(
                node_id=placement.node, soft=False
            )
        if placement.slot:
            if not any(node.slots for node in nodes):
                raise ClusterError(
                    f"no node of the Ray cluster offers a measurement slot ({SLOT_RESOURCE})"
                )
            options["resources"] = {SLOT_RESOURCE: 1}
        if placement.cpus is not None:
            options["num_cpus"] = placement.cpus
        return options

    def close(self) -> None:
        if self._owned and ray.is_initialized():
            ray.shutdown()


@dataclass(frozen=True)
class _Flight(Generic[P]):
    """A job in flight: what it runs, where, whether the batch chose its node (and so may move
    it), and the nodes it already failed on."""

    job: int
    payload: P
    placement: Placement
    chosen: bool
    tried: tuple[str, ...] = ()


class RayBatch(Batch[P, R]):
    """Jobs of one task on a `RayCluster`: one Ray task, one ObjectRef, per job."""

    def __init__(self, cluster: RayCluster, task: Callable[[P], R]) -> None:
        self._cluster = cluster
        self._task = task
        self._refs: dict[Any, _Flight[P]] = {}
        self._count = 0

    @property
    def pending(self) -> int:
        return len(self._refs)

    def submit(self, payload: P, placement: Placement | None = None) -> int:
        placement = placement or Placement()
        chosen = placement.node is None and self._cluster.checked is not None
        if chosen:
            placement = replace(placement, node=self._pick(placement, ()))
        job = self._count
        self._count += 1
        self._launch(_Flight(job, payload, placement, chosen))
        return job

    def _launch(self, flight: _Flight[P]) -> None:
        options = self._cluster.options(flight.placement)
        remote = self._cluster.remote.options(**options) if options else self._cluster.remote
        self._refs[remote.remote(self._task, flight.payload)] = flight

    def _pick(self, placement: Placement, avoid: Iterable[str]) -> str:
        """The checked node with the fewest of this batch's jobs per CPU that can take one."""
        skip = set(avoid)
        fits = [
            node
            for node in self._cluster.nodes()
            if node.id not in skip
            and (node.slots > 0 or not placement.slot)
            and (placement.cpus is None or placement.cpus <= node.cpus)
        ]
        if not fits:
            raise ClusterError(
                "no node that passed the preflight can take this job"
                + (f" (it already failed on {', '.join(sorted(skip))})" if skip else "")
            )
        flying = [flight.placement.node for flight in self._refs.values()]
        return min(fits, key=lambda node: (flying.count(node.id) + 1) / max(node.cpus, 1.0)).id

    def next_finished(self) -> Finished[R]:
        while self._refs:
            done, _ = ray.wait(list(self._refs), num_returns=1)
            flight = self._refs.pop(done[0])
            try:
                ran: Ran[R] = ray.get(done[0])
            except ray.exceptions.RayError as exc:  # the cluster failed the job, not its task
                if not self._again(flight, describe(exc)):
                    return Finished(flight.job, None, describe(exc), flight.placement.node)
                continue
            return Finished(flight.job, ran.value, ran.error, ran.node)
        raise ClusterError("no job is pending")

    def _again(self, flight: _Flight[P], error: str) -> bool:
        """Run a failed job on another checked node, if the batch chose its node and it has
        tries left; False when it does not run again."""
        where = str(flight.placement.node)
        tried = (*flight.tried, where)
        if not flight.chosen or len(tried) > ELSEWHERE_RETRIES:
            return False
        try:
            node = self._pick(flight.placement, tried)
        except ClusterError:
            return False
        LOGGER.warning(
            "job %d failed on node %s (%s); running it on node %s", flight.job, where, error, node
        )
        self._launch(
            _Flight(flight.job, flight.payload, replace(flight.placement, node=node), True, tried)
        )
        return True

    def cancel(self) -> None:
        for ref in self._refs:
            ray.cancel(ref)
        self._refs.clear()
