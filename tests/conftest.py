"""The Ray cluster the Ray tests share: started once per session, when a test first asks for it.

A head and a second node on 127.0.0.1 (`cluster.loopback`), with this process connected to it.
The nodes get this folder on PYTHONPATH (a worker imports a task's module, and some tasks live
in `support`) and differ in one way a machine can: each knows its name (SPEEDPROOF_TEST_NODE,
"head" or "extra") and keeps shipped bundles in a folder of its own, and only the extra node
has TOY_ACCEL=1 (`support.cluster_toy`). The head also serves Ray Client, so `ray://` can be
tried from another process.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NODE_NAMES = ("head", "extra")


@dataclass(frozen=True)
class LoopbackRay:
    address: str
    # The head's Ray Client address, ray://127.0.0.1:PORT.
    client: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def loopback_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackRay]:
    from speedproof.cluster.loopback import loopback_cluster

    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    port = _free_port()
    # Each node keeps shipped bundles in a folder of its own, as separate machines would.
    caches = tmp_path_factory.mktemp("bundle-caches")
    node_env = [
        {"SPEEDPROOF_TEST_NODE": "head", "SPEEDPROOF_BUNDLE_CACHE": str(caches / "head")},
        {
            "SPEEDPROOF_TEST_NODE": "extra",
            "TOY_ACCEL": "1",
            "SPEEDPROOF_BUNDLE_CACHE": str(caches / "extra"),
        },
    ]
    with loopback_cluster(
        nodes=2, cpus=1, env={"PYTHONPATH": path}, node_env=node_env, client_port=port
    ) as address:
        import ray

        ray.init(address=address, logging_level=logging.WARNING)
        yield LoopbackRay(address, f"ray://127.0.0.1:{port}")


@pytest.fixture(scope="session")
def ray_address(loopback_ray: LoopbackRay) -> str:
    """The session's two-node Ray cluster, this process connected to it."""
    return loopback_ray.address
