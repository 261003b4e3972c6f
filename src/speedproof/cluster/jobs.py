"""The execution layer's vocabulary: a job, where it may run, and what comes back.

A job is a task — a module-level function, so that a worker can import it by name — applied to
one picklable payload. A `Cluster` runs jobs on its workers; a `Batch` hands back each job's
outcome exactly once, as a `Finished`, in the order the jobs finish. Workers only return
values: everything the product keeps (JSON lines, the verification cache) is written by the
driver, the process that submitted the jobs, so a worker that dies half-way leaves nothing
behind and its job can simply run again.

A worker that dies (killed, out of memory, its node gone) costs its job an attempt; the job runs
again from the start on another worker, up to `MAX_RETRIES` times, and only then comes back as
an error. An exception raised by the task itself is not retried: it is the job's outcome.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar

P = TypeVar("P")
R = TypeVar("R")

# Worker deaths one job survives. Ray's own default for tasks is 3 as well; a job that kills
# its worker four times in a row is not going to succeed on a fifth.
MAX_RETRIES = 3
# Other nodes a job whose node failed it (lost, or unable to load it) is tried on, on a Ray
# cluster. A job that fails on three different nodes fails because of itself, not of a node;
# and each attempt of a timed judgement costs minutes of a measuring node.
ELSEWHERE_RETRIES = 2
LOCAL_NODE = "local"
# The custom resource a node advertises for its measurement slot (`ray start --resources
# '{"speedproof_slot": 1}'`): a job that asks for it holds the node's only slot while it runs.
SLOT_RESOURCE = "speedproof_slot"


@dataclass(frozen=True)
class Placement:
    """Where a job may run and what it holds there. `node` pins it to one node (an id from
    `Cluster.nodes()`); `slot` makes it hold that node's measurement slot, so no other
    slot-holding job runs beside it; `cpus` is the CPUs it reserves (None: the back end's
    default, one). A timed job asks for all of its node's CPUs (`measuring_on`), so that no
    other job, a function-mode verification say, runs beside its timed runs. The local back end
    has no CPU accounting: there the slot's lock is what keeps timed jobs apart."""

    node: str | None = None
    slot: bool = False
    cpus: float | None = None

    def __post_init__(self) -> None:
        if self.cpus is not None and not self.cpus > 0:
            raise ValueError(f"a job reserves more than 0 CPUs, not {self.cpus}")


@dataclass(frozen=True)
class NodeInfo:
    """One node of a cluster: its id, address, CPUs and measurement slots, and the key of the
    host it runs on (`node_probe.host_facts`) once the preflight has asked it."""

    id: str
    address: str
    cpus: float
    slots: int
    host: str | None = None


def measuring_on(node: NodeInfo) -> Placement:
    """The placement of a timed job: pinned to `node`, holding its slot and all its CPUs."""
    return Placement(node=node.id, slot=True, cpus=node.cpus or None)


@dataclass(frozen=True)
class Ran(Generic[R]):
    """What a worker sends back: the task's value or the exception it raised, and the node."""

    node: str
    value: R | None
    error: str | None


@dataclass(frozen=True)
class Finished(Generic[R]):
    """A job's outcome. `error` is set when there is no value: the task raised, or its worker
    died more than `MAX_RETRIES` times. `node` is where it last ran, when known."""

    job: int
    value: R | None
    error: str | None
    node: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def describe(exc: BaseException) -> str:
    """One line naming an exception: its class and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# The node the job running in this process runs on (set by `run_task`; a worker runs one job at
# a time), for tasks that report where they ran.
_current_node: str | None = None


def current_node() -> str | None:
    """The id of the node the running job runs on; None outside a job."""
    return _current_node


def run_task(task: Callable[[P], R], payload: P, node: str) -> Ran[R]:
    """Run one job in a worker; an exception becomes the job's outcome, never a retry."""
    global _current_node
    _current_node = node
    try:
        return Ran(node, task(payload), None)
    except Exception as exc:
        return Ran(node, None, describe(exc))
    finally:
        _current_node = None


class Batch(ABC, Generic[P, R]):
    """The jobs of one task submitted to a cluster; each one's outcome is reported once."""

    @abstractmethod
    def submit(self, payload: P, placement: Placement | None = None) -> int:
        """Queue one job; returns its number, counting from 0 in this batch."""

    @abstractmethod
    def next_finished(self) -> Finished[R]:
        """Block until a job finishes and return it; a ClusterError when none is pending."""

    @property
    @abstractmethod
    def pending(self) -> int:
        """Jobs submitted and not yet returned by `next_finished`."""

    @abstractmethod
    def cancel(self) -> None:
        """Forget every pending job: none of them is reported; queued ones never start."""

    def __enter__(self) -> Batch[P, R]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cancel()


class Cluster(ABC):
    """Workers that run jobs: `LocalCluster` (processes here) or `RayCluster`."""

    name: str

    @property
    @abstractmethod
    def slots(self) -> int:
        """How many jobs run at once."""

    @abstractmethod
    def batch(self, task: Callable[[P], R]) -> Batch[P, R]:
        """A new batch of jobs of `task`."""

    @abstractmethod
    def nodes(self) -> list[NodeInfo]:
        """The nodes jobs can be placed on."""

    @abstractmethod
    def close(self) -> None:
        """Release the workers (a cluster this process did not start is left running)."""

    def __enter__(self) -> Cluster:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def run_all(
    cluster: Cluster,
    task: Callable[[P], R],
    payloads: Iterable[P],
    *,
    window: int | None = None,
) -> Iterator[Finished[R]]:
    """Every payload through `task`, outcomes as they finish; `Finished.job` is the payload's
    position. At most `window` jobs are in flight (twice the cluster's slots by default: enough
    to keep every worker fed while the driver handles a result, few enough that tens of
    thousands of payloads never sit in the scheduler at once)."""
    limit = max(1, window or 2 * cluster.slots)
    waiting = iter(payloads)
    with cluster.batch(task) as batch:
        for payload in waiting:
            batch.submit(payload)
            if batch.pending >= limit:
                break
        while batch.pending:
            finished = batch.next_finished()
            for payload in waiting:
                batch.submit(payload)
                break
            yield finished
