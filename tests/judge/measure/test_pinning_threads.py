"""Moving the judge off the timed CPUs moves every thread of it, not only the calling one.

Read back from the kernel: `Cpus_allowed_list` in /proc/self/task/<tid>/status, per thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.judge.measure.pinning import available_cpus, judge_elsewhere

TASKS = Path("/proc/self/task")
needs_two = pytest.mark.skipif(
    len(available_cpus()) < 2, reason="needs a process allowed on two CPUs"
)


def _cpu_list(text: str) -> frozenset[int]:
    """'0-1,3' as {0, 1, 3}."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


def _allowed_by_task() -> dict[int, frozenset[int]]:
    """Every thread of this process and the CPUs the kernel lets it run on."""
    found: dict[int, frozenset[int]] = {}
    for task in TASKS.iterdir():
        try:
            status = (task / "status").read_text()
        except FileNotFoundError:
            continue  # the thread ended while we listed
        for line in status.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found[int(task.name)] = _cpu_list(line.partition(":")[2])
    return found


@pytest.fixture
def blocked_threads() -> Iterator[list[threading.Thread]]:
    """Two threads started before any pinning, alive and asleep until the test ends."""
    release = threading.Event()
    threads = [threading.Thread(target=release.wait, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    yield threads
    release.set()
    for thread in threads:
        thread.join(timeout=10)


def test_a_cpu_list_is_read_with_its_ranges() -> None:
    assert _cpu_list("0-1,3\n") == frozenset({0, 1, 3})
    assert _cpu_list("2") == frozenset({2})


@needs_two
def test_threads_started_before_the_judge_moves_leave_the_pinned_cpus_too(
    blocked_threads: list[threading.Thread],
) -> None:
    before = available_cpus()
    pinned = frozenset({max(before)})
    with judge_elsewhere(pinned):
        inside = _allowed_by_task()
    tids = {thread.native_id for thread in blocked_threads}
    assert tids <= inside.keys() and threading.get_native_id() in inside
    assert set(inside.values()) == {before - pinned}, inside


@needs_two
def test_every_thread_gets_its_cpus_back_afterwards(
    blocked_threads: list[threading.Thread],
) -> None:
    before = available_cpus()
    with judge_elsewhere(frozenset({max(before)})):
        pass
    assert set(_allowed_by_task().values()) == {before}


@needs_two
def test_a_thread_started_while_the_judge_is_moved_runs_off_the_pinned_cpus() -> None:
    before = available_cpus()
    pinned = frozenset({max(before)})
    release = threading.Event()
    late = threading.Thread(target=release.wait, daemon=True)
    with judge_elsewhere(pinned):
        late.start()
        inside = _allowed_by_task()
        release.set()
    late.join(timeout=10)
    assert late.native_id is not None and inside[late.native_id] == before - pinned
