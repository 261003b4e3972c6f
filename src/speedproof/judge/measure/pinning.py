"""Which CPUs the timed runs may use, and keeping the judge off them while they run.

On the 2-vCPU machine the figures come from, the per-run wall time of logstat's `shop-day`
(a Go program, ~35 ms) had a robust spread (MAD × 1.4826) of 9-17 % when the kernel could
place it on either CPU, and 3.4-4.9 % pinned to one; a pure CPU loop moved 1.3 % either way,
and a program that only faults in fresh pages moved 8 % unpinned and 3 % pinned. Waking a
thread on the other, idle virtual CPU is what costs: the hypervisor has to run that vCPU
first. ADR 0027 has the paired figures.

Pinning is opt-in (`[policy] timed_cpus = 1`; the default "all" leaves the kernel free): it
changes what is measured, not only how precisely. A Go program pinned to one CPU runs with one
P and its garbage collector on the same core. logstat's bundled `speedup-slow-report-builder`
patch (a strings.Builder instead of `+=` over ~1,200 lines) made `api-day-slow` 1.37 × faster
unpinned (165 → 121 ms) and nothing pinned (118 → 126 ms, `hyperfine -N`): the quadratic
copying cost little, the page faults and cross-vCPU wake-ups of the garbage it made cost the
rest. Pinned runs go to the highest-numbered CPUs the judge may use (CPU 0 takes most device
interrupts on a stock kernel), both sides to the same set; the candidate's facts record the set.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from speedproof.ground.errors import InfrastructureError

CpuSetting = int | Literal["all"]


def available_cpus() -> frozenset[int]:
    """The CPUs this process may run on (its affinity mask)."""
    return frozenset(os.sched_getaffinity(0))


def timed_cpus(
    setting: CpuSetting, available: frozenset[int] | None = None
) -> frozenset[int] | None:
    """The CPUs timed runs are pinned to under `setting`, or None for no pinning ("all")."""
    if setting == "all":
        return None
    cpus = sorted(available_cpus() if available is None else available)
    if not 1 <= setting <= len(cpus):
        raise InfrastructureError(
            f"policy.timed_cpus = {setting} cannot be met: this process may use "
            f"{len(cpus)} CPU(s) ({', '.join(map(str, cpus))})"
        )
    return frozenset(cpus[-setting:])


def describe(cpus: frozenset[int] | None) -> str:
    """The set in words, for receipts and reports."""
    if cpus is None:
        return "all CPUs (not pinned)"
    return "CPU " + ", ".join(str(cpu) for cpu in sorted(cpus))


@contextlib.contextmanager
def judge_elsewhere(cpus: frozenset[int] | None) -> Iterator[None]:
    """Move every thread of this process off `cpus` for the duration, when any other CPU is
    left for it, and give each thread its own mask back afterwards.

    The judge checks each run's output while the next one starts; on the pinned CPU that work
    would land in the target's wall time. `os.sched_setaffinity(0, …)` moves only the calling
    thread, so threads started before (the live status line of rich's `console.status`, worker
    threads) stayed free to run on the pinned CPU; every thread in /proc/self/task is moved
    instead. Threads started inside inherit the narrower mask from the thread that starts them.
    """
    own = available_cpus()
    rest = own - cpus if cpus is not None else frozenset()
    if not rest:
        yield
        return
    earlier = _set_every_thread(lambda tid: rest)
    try:
        yield
    finally:
        _set_every_thread(lambda tid: earlier.get(tid, own))


def _thread_ids(tasks: Path = Path("/proc/self/task")) -> list[int]:
    return [int(entry.name) for entry in tasks.iterdir() if entry.name.isdigit()]


def _set_every_thread(mask_for: Callable[[int], frozenset[int]]) -> dict[int, frozenset[int]]:
    """Give every thread of this process the mask `mask_for(tid)`; returns the masks they had.

    The calling thread goes first, so that threads it starts from now on inherit the new mask.
    A thread started by another thread between listing and moving inherits the old mask and
    shows up on the next pass; the passes end when one finds every thread already right. A
    thread that ends meanwhile is skipped.
    """
    earlier: dict[int, frozenset[int]] = {}
    _set_thread(threading.get_native_id(), mask_for, earlier)
    while True:
        changed = [tid for tid in _thread_ids() if _set_thread(tid, mask_for, earlier)]
        if not changed:
            return earlier


def _set_thread(
    tid: int, mask_for: Callable[[int], frozenset[int]], earlier: dict[int, frozenset[int]]
) -> bool:
    """Give thread `tid` its mask, remembering the first one it had; True when it changed."""
    try:
        had = frozenset(os.sched_getaffinity(tid))
        earlier.setdefault(tid, had)
        wanted = mask_for(tid)
        if had == wanted:
            return False
        os.sched_setaffinity(tid, wanted)
    except ProcessLookupError:
        return False
    return True
