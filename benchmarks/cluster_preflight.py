"""What the cluster preflight costs, and how long a dead address takes to be reported.

    python benchmarks/cluster_preflight.py [--nodes 2] [--repeat 3]

Starts a real Ray cluster on 127.0.0.1 (`loopback_cluster`, one CPU a node) and prints, per
repeat, in a fresh driver each time: the connection (`RayCluster`), the driver's verifier digest
(function mode's `Needs`), the preflight with cold workers (one probe task per node, each
starting a worker) and again with warm ones. Then `speedproof fn verify --batch --cluster ray`
with RAY_ADDRESS on a port where nothing listens: the seconds until it exits, and its exit code.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from speedproof.cluster.loopback import loopback_cluster
from speedproof.cluster.preflight import function_needs

DRIVER = """
import sys, time
from speedproof.cluster.preflight import function_needs
from speedproof.cluster.ray_cluster import RayCluster
t0 = time.monotonic(); cluster = RayCluster(sys.argv[1]); t1 = time.monotonic()
needs = function_needs(); t2 = time.monotonic()
cluster.preflight(needs); t3 = time.monotonic()
cluster.preflight(needs); t4 = time.monotonic()
print(f"connect {t1 - t0:.2f} s, digest {t2 - t1:.2f} s, preflight cold {t3 - t2:.2f} s, "
      f"warm {t4 - t3:.2f} s")
cluster.close()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dead_address() -> str:
    with tempfile.TemporaryDirectory() as folder:
        rows = Path(folder) / "rows.jsonl"
        rows.write_text("", encoding="utf-8")
        env = {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{_free_port()}"}
        command = [sys.executable, "-m", "speedproof", "fn", "verify", "--batch", str(rows)]
        command += ["--out", str(Path(folder) / "out.jsonl"), "--cluster", "ray"]
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        return f"dead address: exit {done.returncode} after {time.monotonic() - started:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    function_needs()  # warm this process's imports; each driver below is fresh anyway
    with loopback_cluster(nodes=args.nodes, cpus=1) as address:
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, address], capture_output=True, text=True, check=True
            )
            print(f"{args.nodes} nodes: {done.stdout.strip()}")
    print(dead_address())
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
