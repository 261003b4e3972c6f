"""A real Ray cluster of several nodes on 127.0.0.1, for trying and measuring the Ray back end
on one machine (the tests and `benchmarks/cluster_scaling.py` use it).

Every node is a full Ray node (its own raylet, object store and worker processes), bound to the
loopback address, each offering one measurement slot. Ray resolves 127.0.0.1 to the machine's
routable address unless it is told the cluster is a single-machine one
(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, read when Ray is imported), so that variable is set here,
before Ray is imported, and is inherited by every node and worker; no traffic leaves loopback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from speedproof.cluster.errors import ClusterUnavailable
from speedproof.cluster.jobs import SLOT_RESOURCE
from speedproof.cluster.spec import RAY_EXTRA

SINGLE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOOPBACK = "127.0.0.1"


@contextmanager
def _environment(extra: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _nth(envs: Sequence[Mapping[str, str]], index: int) -> Mapping[str, str]:
    return envs[index] if index < len(envs) else {}


@contextmanager
def loopback_cluster(
    nodes: int = 2,
    cpus: int = 1,
    *,
    env: Mapping[str, str] | None = None,
    node_env: Sequence[Mapping[str, str]] = (),
    client_port: int | None = None,
) -> Iterator[str]:
    """Start `nodes` Ray nodes of `cpus` CPUs on 127.0.0.1 and yield the cluster's address.
    `env` is given to every node (and so to its workers) only, `node_env[i]` to node i alone
    (0 is the head): nodes that differ in what their machine offers. With `client_port` the
    head also serves Ray Client there (`ray://127.0.0.1:PORT`). Everything stops on exit."""
    os.environ[SINGLE_MACHINE] = "0"
    try:
        import ray
        from ray._private import ray_constants
        from ray.cluster_utils import Cluster
    except ImportError as exc:
        raise ClusterUnavailable(f"the Ray back end needs Ray: {RAY_EXTRA}") from exc
    if ray_constants.ENABLE_RAY_CLUSTER:
        raise ClusterUnavailable(f"Ray was imported before {SINGLE_MACHINE}=0 could be set")
    node: dict[str, Any] = {
        "num_cpus": cpus,
        "node_ip_address": LOOPBACK,
        "resources": {SLOT_RESOURCE: 1},
    }
    head: dict[str, Any] = {**node, "include_dashboard": False}
    if client_port is not None:
        head["ray_client_server_port"] = client_port
    with _environment({**(env or {}), **_nth(node_env, 0)}):
        cluster = Cluster(initialize_head=True, head_node_args=head)
    for index in range(1, nodes):
        with _environment({**(env or {}), **_nth(node_env, index)}):
            cluster.add_node(**node)
    cluster.wait_for_nodes()
    try:
        yield str(cluster.address)
    finally:
        # A process connected to another cluster (the tests' shared one) keeps that connection.
        if ray.is_initialized() and ray.get_runtime_context().gcs_address == cluster.address:
            ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
