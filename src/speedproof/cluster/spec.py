"""Which cluster a command runs on, from its `--cluster` and `--workers` options.

(none), local       worker processes on this machine (`--workers` of them); Ray is never
                    imported
ray                 the Ray cluster at RAY_ADDRESS, else the one `ray start --head` left
                    running on this machine
ray://HOST:PORT     a remote Ray cluster through Ray Client
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from speedproof.cluster.errors import ClusterError, ClusterUnavailable
from speedproof.cluster.jobs import Cluster
from speedproof.cluster.local import LocalCluster
from speedproof.cluster.preflight import Needs

DEFAULT_WORKERS = 2
RAY_EXTRA = "pip install 'speedproof[ray]'"


def ray_address(spec: str) -> str:
    """The address `ray.init` is given for a `ray…` spec."""
    if spec.startswith("ray://"):
        return spec
    return os.environ.get("RAY_ADDRESS") or "auto"


def open_cluster(
    spec: str | None = None, *, workers: int = DEFAULT_WORKERS, needs: Needs | None = None
) -> Cluster:
    """The cluster `spec` names; see the module docstring. A Ray cluster is connected to within
    a deadline (`ray_connect`) and its nodes checked against `needs` (by default the driver's
    speedproof version) before it is handed back (`preflight`)."""
    if spec in (None, "", "local"):
        return LocalCluster(workers)
    assert spec is not None
    if spec != "ray" and not spec.startswith("ray://"):
        raise ClusterError(f"unknown cluster {spec!r}: use local, ray or ray://HOST:PORT")
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        raise ClusterUnavailable(f"the Ray back end needs Ray: {RAY_EXTRA}") from exc
    from speedproof.cluster.ray_cluster import RayCluster

    cluster = RayCluster(ray_address(spec))
    try:
        cluster.preflight(needs or Needs())
    except BaseException:
        cluster.close()
        raise
    return cluster


@contextmanager
def cluster_scope(
    cluster: Cluster | None = None,
    *,
    spec: str | None = None,
    workers: int = DEFAULT_WORKERS,
    needs: Needs | None = None,
) -> Iterator[Cluster]:
    """`cluster` as it is (its owner closes it), or one opened from `spec` and closed after."""
    if cluster is not None:
        yield cluster
        return
    with open_cluster(spec, workers=workers, needs=needs) as opened:
        yield opened
