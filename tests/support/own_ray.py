"""A loopback Ray cluster of a test's own, in a process of its own, whose nodes the test may kill
(no tests here).

The two-node cluster of `conftest` is shared by every Ray test, so a test that loses a node must
not lose one of those. This one runs `loopback_cluster` in a child process (this process stays
connected to that shared cluster, and Ray allows one connection a process), which prints the
cluster's address and waits for its stdin to close. Each node knows its name
(SPEEDPROOF_TEST_NODE, "head", "extra", "third"…) and keeps its bundle cache in a folder of its
own (SPEEDPROOF_BUNDLE_CACHE), as separate machines would.

    python -m support.own_ray NODES CACHE_ROOT
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
NAMES = ("head", "extra", "third", "fourth")


@dataclass(frozen=True)
class OwnRay:
    address: str
    process: subprocess.Popen[str]
    caches: dict[str, Path]

    def raylet_of(self, name: str) -> int:
        """The pid of the raylet of the node named `name`."""
        marker = f"SPEEDPROOF_TEST_NODE={name}".encode()
        for pid in _descendants(self.process.pid):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if b"raylet" in command.split(b"\0")[0] and marker in environ.split(b"\0"):
                return pid
        raise AssertionError(f"no raylet of node {name}")

    def kill_node(self, name: str) -> None:
        """The node named `name` lost as a machine is: all its processes (its raylet, its
        workers, whatever they started) stopped, then killed outright.

        Killing the raylet alone loses no job here. The raylet's parent is this cluster's
        process, which never reaps it, so it stays a zombie; a Ray worker checks its raylet by
        pid once a second, a zombie passes, and a worker already running a job (the preflight's
        probe leaves one warm on every node) finishes it and sends the value straight to the
        driver, the job's owner. Measured: a job sleeping 10 s on a node whose raylet was
        SIGKILLed 4 s in returned its value 6.6 s after the kill; with the raylet reaped, as
        init reaps it on a real node, it failed with NodeDiedError 0.5 s after."""
        raylet = self.raylet_of(name)
        stopped: set[int] = set()
        # Stopped first, so that none starts a process the kill would miss: the set grows until
        # no process of the node is left running.
        while fresh := {raylet, *_descendants(raylet)} - stopped:
            for pid in fresh:
                _signal(pid, signal.SIGSTOP)
            stopped |= fresh
        for pid in stopped:
            _signal(pid, signal.SIGKILL)


def _signal(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.kill(pid, signum)


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    pending = [pid]
    while pending:
        for thread in Path(f"/proc/{pending.pop()}/task").glob("*/children"):
            try:
                children = [int(child) for child in thread.read_text().split()]
            except OSError:
                continue
            found += children
            pending += children
    return found


@contextmanager
def own_ray(nodes: int, caches: Path) -> Iterator[OwnRay]:
    """`nodes` loopback Ray nodes in a child process; stopped on exit."""
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "support.own_ray", str(nodes), str(caches)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        assert address, "the cluster did not start"
        folders = {name: caches / name for name in NAMES[:nodes]}
        yield OwnRay(address, process, folders)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=120)


def main(nodes: int, caches: Path) -> None:
    from speedproof.cluster.loopback import loopback_cluster

    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    node_env = [
        {"SPEEDPROOF_TEST_NODE": name, "SPEEDPROOF_BUNDLE_CACHE": str(caches / name)}
        for name in NAMES[:nodes]
    ]
    with loopback_cluster(nodes=nodes, cpus=1, env={"PYTHONPATH": path}, node_env=node_env) as at:
        print(json.dumps(at)[1:-1], flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
