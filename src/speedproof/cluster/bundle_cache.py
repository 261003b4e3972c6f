"""A node's cache of shipped revisions: each parent's bundle crosses the network to a node once.

A campaign judges many candidates against one parent, and a job that carries the parent's
bundle costs the driver its bytes every time (the examples' bundles are tens of kilobytes, a
real project's history megabytes). So the driver sends the bytes with the first job a node gets
for a parent (`Shipments`), and the node keeps them in a content-addressed folder: one file a
bundle, named by the revision and the sha256 of its bytes. A later job names the bundle by both
and carries no bytes. Before any use the node hashes the file again: a cached bundle that is
missing (another machine under a reused id, a cleared folder) or that no longer hashes to its
name (a disk fault, a hand edit) is never unpacked; the job fails with `BundleMissing`, and the
driver sends it again with the bytes. A stale or damaged cache cannot judge the wrong tree, and
`unpack_revision` still checks the commit it unpacks.

The folder is SPEEDPROOF_BUNDLE_CACHE, else `$XDG_CACHE_HOME/speedproof/bundles` (by default
~/.cache/speedproof/bundles); it keeps the `KEEP` most recently used bundles.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.ground.errors import InfrastructureError

CACHE_VARIABLE = "SPEEDPROOF_BUNDLE_CACHE"
# Bundles a node keeps: a campaign moves to a new parent after each accept, and a node rarely
# serves more than a few campaigns at once; 32 parents of a large repository (tens of MB each)
# is a bounded share of a node's disk.
KEEP = 32


class BundleMissing(InfrastructureError):
    """The node has no intact copy of the bundle a job names: the driver sends the bytes."""


def digest_of(bundle: bytes) -> str:
    return hashlib.sha256(bundle).hexdigest()


def cache_folder() -> Path:
    named = os.environ.get(CACHE_VARIABLE)
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "speedproof" / "bundles"


def _file(folder: Path, rev: str, digest: str) -> Path:
    return folder / f"{rev}-{digest}.bundle"


def store(bundle: bytes, rev: str, digest: str, folder: Path | None = None) -> Path:
    """Keep the shipped `bundle` of `rev`; it must hash to `digest`. Returns its file."""
    if digest_of(bundle) != digest:
        raise InfrastructureError(
            f"the bundle of {rev} arrived with sha256 {digest_of(bundle)}, not the {digest} "
            "the driver sent: damaged in transit; judge it again"
        )
    folder = folder or cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = _file(folder, rev, digest)
    # Written aside and renamed, so a reader never sees half a bundle.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_bytes(bundle)
    os.replace(partial, path)
    _prune(folder)
    return path


def cached(rev: str, digest: str, folder: Path | None = None) -> Path:
    """The cached bundle of `rev` hashing to `digest`; BundleMissing when absent or damaged
    (a damaged file is removed, so the bytes sent next replace it)."""
    path = _file(folder or cache_folder(), rev, digest)
    try:
        found = digest_of(path.read_bytes())
    except FileNotFoundError:
        raise BundleMissing(f"this node has no cached bundle of {rev} ({digest[:12]})") from None
    if found != digest:
        path.unlink(missing_ok=True)
        raise BundleMissing(
            f"this node's cached bundle of {rev} hashes to {found[:12]}, not {digest[:12]}: removed"
        )
    os.utime(path)  # used now: the last to be pruned
    return path


def _prune(folder: Path) -> None:
    kept = sorted(folder.glob("*.bundle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in kept[KEEP:]:
        old.unlink(missing_ok=True)


@dataclass
class Shipments:
    """The driver's memory of which node got which bundle (node id, digest)."""

    sent: set[tuple[str, str]] = field(default_factory=set)
    # Bundles sent, and their bytes, for the log and the scaling figures.
    count: int = 0
    bytes: int = 0

    def needs(self, node: str, digest: str) -> bool:
        return (node, digest) not in self.sent

    def shipped(self, node: str, digest: str, size: int) -> None:
        self.sent.add((node, digest))
        self.count += 1
        self.bytes += size

    def forget(self, node: str, digest: str) -> None:
        """The node lost it (BundleMissing): the next job there carries the bytes again."""
        self.sent.discard((node, digest))
