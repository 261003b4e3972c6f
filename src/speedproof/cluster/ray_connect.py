"""Connecting to a Ray cluster within a bounded time, or saying why not.

`ray.init` on an address where nothing answers does not fail: Ray's core worker retries the GCS
for minutes (over 150 s measured, printing reconnect warnings and no error). So the address's
TCP port is tried first (a refused or unreachable port is known in milliseconds), and `ray.init`
then runs with a deadline: the whole connection takes at most `SPEEDPROOF_RAY_CONNECT_TIMEOUT`
seconds (default 30), and then fails with a message naming the address and the fix.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable

from speedproof.cluster.errors import ClusterUnavailable

TIMEOUT_VARIABLE = "SPEEDPROOF_RAY_CONNECT_TIMEOUT"
# Connecting to a live head took 0.06-0.8 s here (2 cores at load 8,
# benchmarks/cluster_preflight.py); 30 s leaves room for a slow network and a loaded head, and
# keeps an address that never answers well under a minute.
DEFAULT_TIMEOUT_S = 30.0
FIX = "start one with `ray start --head` there, or set RAY_ADDRESS (or --cluster ray://HOST:PORT)"


def connect_timeout() -> float:
    """The connection's deadline in seconds: SPEEDPROOF_RAY_CONNECT_TIMEOUT or 30."""
    raw = os.environ.get(TIMEOUT_VARIABLE, "")
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ClusterUnavailable(f"{TIMEOUT_VARIABLE}={raw!r} is not a positive number of seconds")
    return value


def bootstrap_address(address: str) -> str | None:
    """The HOST:PORT `address` leads to (`auto`: RAY_ADDRESS or the cluster `ray start` left on
    this machine); None when there is none to try (Ray then says so itself, at once)."""
    if address.startswith("ray://"):
        return address.removeprefix("ray://")
    if address != "auto":
        return address
    try:  # Ray's own lookup (a private module: should it move, only the deadline remains)
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address(address)
    except (ImportError, ConnectionError, ValueError):
        return None


def probe_port(address: str, timeout: float) -> None:
    """A ClusterUnavailable naming `address` unless something accepts TCP connections there."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterUnavailable(f"{address!r} is not a Ray address (HOST:PORT); {FIX}")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return
    except OSError as exc:
        raise ClusterUnavailable(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); {FIX}"
        ) from exc


def within(init: Callable[[], object], seconds: float, address: str) -> None:
    """Run `init` (ray.init), failing after `seconds`: Ray keeps retrying an address that
    accepts connections but does not speak its protocol. The thread left behind is a daemon."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            init()
        except BaseException as exc:  # handed to the caller below
            failure.append(exc)

    worker = threading.Thread(target=run, name="ray-connect", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ClusterUnavailable(
            f"the Ray cluster at {address} did not answer within {seconds:g} s ({TIMEOUT_VARIABLE} "
            f"sets the wait); {FIX}"
        )
    if failure:
        raise failure[0]


def open_connection(address: str, init: Callable[[], object]) -> None:
    """Probe `address`, then `init` within what is left of the deadline."""
    deadline = time.monotonic() + connect_timeout()
    target = bootstrap_address(address)
    if target is not None:
        probe_port(target, min(5.0, deadline - time.monotonic()))
    within(init, max(1.0, deadline - time.monotonic()), target or address)
