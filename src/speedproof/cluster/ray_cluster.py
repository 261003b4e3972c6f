"""The Ray back end: jobs as Ray tasks on a running Ray cluster (the optional `ray` extra).

Imported only when a command or a caller asks for Ray; `spec.open_cluster` turns a missing Ray
into a one-line error naming the extra. Each job is one task with `max_retries=MAX_RETRIES`:
when its worker process or its node dies, Ray runs it again elsewhere, and the driver sees one
value per job whatever happened on the way. Exceptions raised by the task are caught in the
worker and returned as the job's outcome, so Ray never retries those.

Placement: a pinned job gets a hard `NodeAffinitySchedulingStrategy` for its node; a job that
holds a measurement slot asks for one unit of the `speedproof_slot` resource, which a node
offers once (`ray start --resources '{"speedproof_slot": 1}'`), so the scheduler itself keeps
slot-holding jobs one at a time per node; a job's `cpus` become its `num_cpus`, so a timed job
that reserves all of its node's CPUs leaves none for any other task there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from speedproof.cluster.errors import ClusterError, ClusterUnavailable
from speedproof.cluster.jobs import (
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

# Ray Client's proxy starts one server process per connection, forked from one of its gRPC
# threads; that fork can die before it runs anything (seen once: no output, 20 ms after the
# fork, "Starting Ray client server failed"), and the proxy reports it as an aborted
# connection. A new connection gets a new server, so an aborted one is tried again, at most
# this many times in all; any other failure is final at once.
CONNECT_ATTEMPTS = 3


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
                connect(lambda: ray.init(address=address, logging_level=logging.WARNING))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ClusterUnavailable(
                    f"no Ray cluster answers at {address!r} ({describe(exc)}); start one with "
                    "`ray start --head` or set RAY_ADDRESS"
                ) from exc
        self.remote: Any = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_run_on_ray)

    @property
    def slots(self) -> int:
        resources = ray.cluster_resources()  # type: ignore[no-untyped-call]
        return max(1, int(resources.get("CPU", 1)))

    def batch(self, task: Callable[[P], R]) -> Batch[P, R]:
        return RayBatch(self, task)

    def nodes(self) -> list[NodeInfo]:
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


class RayBatch(Batch[P, R]):
    """Jobs of one task on a `RayCluster`: one Ray task, one ObjectRef, per job."""

    def __init__(self, cluster: RayCluster, task: Callable[[P], R]) -> None:
        self._cluster = cluster
        self._task = task
        self._refs: dict[Any, int] = {}
        self._count = 0

    @property
    def pending(self) -> int:
        return len(self._refs)

    def submit(self, payload: P, placement: Placement | None = None) -> int:
        options = self._cluster.options(placement or Placement())
        remote = self._cluster.remote.options(**options) if options else self._cluster.remote
        job = self._count
        self._count += 1
        self._refs[remote.remote(self._task, payload)] = job
        return job

    def next_finished(self) -> Finished[R]:
        if not self._refs:
            raise ClusterError("no job is pending")
        done, _ = ray.wait(list(self._refs), num_returns=1)
        ref = done[0]
        job = self._refs.pop(ref)
        try:
            ran: Ran[R] = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died more often than retried
            return Finished(job, None, describe(exc), None)
        return Finished(job, ran.value, ran.error, ran.node)

    def cancel(self) -> None:
        for ref in self._refs:
            ray.cancel(ref)
        self._refs.clear()
