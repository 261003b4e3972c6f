"""The local back end: jobs in worker processes on this machine, the default.

A pool of `workers` spawned processes (spawn, not fork: the driver may hold threads, and a
forked copy of a thread's lock can deadlock). A worker that dies breaks the whole pool in
`concurrent.futures`, failing every job in flight on it; the pool is then started afresh and
those jobs run again, each such break costing every job that was in flight one attempt. Nothing
of Ray is imported here.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.synchronize import Lock
from typing import Generic

from speedproof.cluster.errors import ClusterError
from speedproof.cluster.jobs import (
    LOCAL_NODE,
    MAX_RETRIES,
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

_slot: Lock | None = None


def _start_worker(slot: Lock) -> None:
    global _slot
    _slot = slot


def _run_here(task: Callable[[P], R], payload: P, hold_slot: bool) -> Ran[R]:
    """A job in a pool process; the machine's one measurement slot is a lock all workers share."""
    if hold_slot and _slot is not None:
        with _slot:
            return run_task(task, payload, LOCAL_NODE)
    return run_task(task, payload, LOCAL_NODE)


class LocalCluster(Cluster):
    """`workers` processes on this machine."""

    name = "local"

    def __init__(self, workers: int = 2) -> None:
        self.workers = max(1, workers)
        self._context = multiprocessing.get_context("spawn")
        self._slot = self._context.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self.generation = 0
        self.restarts = 0

    @property
    def slots(self) -> int:
        return self.workers

    def pool(self) -> tuple[ProcessPoolExecutor, int]:
        """The current pool (started on first use) and its generation."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=self._context,
                initializer=_start_worker,
                initargs=(self._slot,),
            )
        return self._pool, self.generation

    def restart(self, generation: int) -> None:
        """Replace the pool of `generation` after a worker died (once, however many noticed).

        The broken pool terminates its other workers; waiting for that means no worker of it
        still runs. The slot gets a new lock: a worker killed while holding the old one (SIGKILL,
        or the pool's own SIGTERM) never released it, and every later timed job would wait for
        it for ever."""
        if generation != self.generation or self._pool is None:
            return
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None
        self._slot = self._context.Lock()
        self.generation += 1
        self.restarts += 1

    def batch(self, task: Callable[[P], R]) -> Batch[P, R]:
        return LocalBatch(self, task)

    def nodes(self) -> list[NodeInfo]:
        return [NodeInfo(LOCAL_NODE, "127.0.0.1", float(self.workers), 1)]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


@dataclass
class _Entry(Generic[P]):
    job: int
    payload: P
    slot: bool
    generation: int = 0
    attempts: int = 1


class LocalBatch(Batch[P, R]):
    """Jobs of one task on a `LocalCluster`."""

    def __init__(self, cluster: LocalCluster, task: Callable[[P], R]) -> None:
        self._cluster = cluster
        self._task = task
        self._flying: dict[Future[Ran[R]], _Entry[P]] = {}
        self._ready: deque[Finished[R]] = deque()
        self._count = 0

    @property
    def pending(self) -> int:
        return len(self._flying) + len(self._ready)

    def submit(self, payload: P, placement: Placement | None = None) -> int:
        placement = placement or Placement()
        if placement.node not in (None, LOCAL_NODE):
            raise ClusterError(f"the local cluster has no node {placement.node!r}")
        job = self._count
        self._count += 1
        self._launch(_Entry(job, payload, placement.slot))
        return job

    def _launch(self, entry: _Entry[P]) -> None:
        pool, entry.generation = self._cluster.pool()
        try:
            future = pool.submit(_run_here, self._task, entry.payload, entry.slot)
        except BrokenProcessPool:
            # The pool broke before this batch noticed: start the next one and submit there.
            self._cluster.restart(entry.generation)
            pool, entry.generation = self._cluster.pool()
            future = pool.submit(_run_here, self._task, entry.payload, entry.slot)
        self._flying[future] = entry

    def next_finished(self) -> Finished[R]:
        while not self._ready:
            if not self._flying:
                raise ClusterError("no job is pending")
            done, _ = wait(list(self._flying), return_when=FIRST_COMPLETED)
            lost = [entry for entry in map(self._settle, done) if entry is not None]
            if lost:
                self._cluster.restart(lost[0].generation)
                for entry in lost:
                    self._again(entry)
        return self._ready.popleft()

    def _settle(self, future: Future[Ran[R]]) -> _Entry[P] | None:
        """Record a finished future; returns its entry when its worker died instead."""
        entry = self._flying.pop(future)
        if future.cancelled():  # the pool was replaced before this job started
            return entry
        error = future.exception()
        if isinstance(error, BrokenProcessPool):
            return entry
        if error is not None:  # the payload or the value could not cross the process boundary
            self._ready.append(Finished(entry.job, None, describe(error), None))
        else:
            ran = future.result()
            self._ready.append(Finished(entry.job, ran.value, ran.error, ran.node))
        return None

    def _again(self, entry: _Entry[P]) -> None:
        if entry.attempts > MAX_RETRIES:
            lost = f"WorkerLost: its worker died {entry.attempts} times"
            self._ready.append(Finished(entry.job, None, lost, None))
            return
        entry.attempts += 1
        self._launch(entry)

    def cancel(self) -> None:
        for future in self._flying:
            future.cancel()
        self._flying.clear()
        self._ready.clear()
