"""The execution layer: function-mode jobs on local worker processes or on a Ray cluster.

`open_cluster(spec, workers=…)` gives a `Cluster`; `run_all` or a `Batch` runs jobs on it.
Nothing here imports Ray unless a Ray cluster is asked for.
"""

from speedproof.cluster.errors import ClusterError, ClusterUnavailable
from speedproof.cluster.jobs import (
    MAX_RETRIES,
    Batch,
    Cluster,
    Finished,
    NodeInfo,
    Placement,
    current_node,
    measuring_on,
    run_all,
)
from speedproof.cluster.local import LocalCluster
from speedproof.cluster.spec import DEFAULT_WORKERS, cluster_scope, open_cluster

__all__ = [
    "DEFAULT_WORKERS",
    "MAX_RETRIES",
    "Batch",
    "Cluster",
    "ClusterError",
    "ClusterUnavailable",
    "Finished",
    "LocalCluster",
    "NodeInfo",
    "Placement",
    "cluster_scope",
    "current_node",
    "measuring_on",
    "open_cluster",
    "run_all",
]
