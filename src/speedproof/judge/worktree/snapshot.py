"""What a folder holds, taken before and after a stage, so that any write a stage may not make
is caught and named.

A snapshot records, for every entry under a folder (tracked, untracked and ignored alike, `.git`
included), its type, mode, size, inode and the kernel's change time (ctime). The change time is
the witness: every write, truncation, chmod, rename or link moves it, and user space cannot set
it back (utime() sets the modification time and moves ctime to now). So no file needs hashing:
a stat per entry, about 2 ms for the 160 files of an example target, 0.2 s for 20 000.

The exception is a file the judge itself replaces by a copy of itself before every measured run
(`Program.fresh_per_run`, docs/adr/0056): its inode and ctime move by design, so its bytes are
the witness instead, hashed when each snapshot is taken (about 3 ms for a 4 MB binary).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# type, mode, size, inode, ctime in ns; a symlink's target stands in for its size.
Entry = tuple[str, int, int | str, int, int]
# At most this many changed paths are named in a reason; the rest are counted.
_NAMED = 5


@dataclass(frozen=True)
class Snapshot:
    root: Path
    entries: Mapping[str, Entry]
    # sha256 of each replaced file, by its path relative to the root.
    digests: Mapping[str, str] = field(default_factory=dict)


def _entry(path: str, info: os.stat_result) -> Entry:
    if stat.S_ISLNK(info.st_mode):
        return ("link", info.st_mode, os.readlink(path), info.st_ino, info.st_ctime_ns)
    kind = "dir" if stat.S_ISDIR(info.st_mode) else "file"
    # A folder's size and ctime move whenever an entry is added or removed inside it, and that
    # entry is reported by its own name: compare folders by existence and mode only.
    if kind == "dir":
        return (kind, info.st_mode, 0, info.st_ino, 0)
    return (kind, info.st_mode, info.st_size, info.st_ino, info.st_ctime_ns)


def _digests(root: Path, replaced: Iterable[Path]) -> dict[str, str]:
    real = os.path.realpath(root)
    found = {}
    for path in replaced:
        name = os.path.relpath(os.path.realpath(path), real)
        if not name.startswith(os.pardir) and os.path.isfile(path):
            with open(path, "rb") as handle:
                found[name] = hashlib.file_digest(handle, "sha256").hexdigest()
    return found


def take(root: Path, replaced: Iterable[Path] = ()) -> Snapshot:
    """Every entry under `root`, without following symlinks; a missing root is empty.

    `replaced` names files the judge replaces by copies between runs: those under `root` are
    hashed, and compared by type, mode, size and bytes instead of inode and ctime.
    """
    entries: dict[str, Entry] = {}
    if not root.is_dir():
        return Snapshot(root, entries)
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            entries[os.path.relpath(path, root)] = _entry(path, info)
    return Snapshot(root, entries, _digests(root, replaced))


def again(before: Snapshot) -> Snapshot:
    """A new snapshot of `before`'s root, with the same files compared by their bytes."""
    return take(before.root, [before.root / name for name in before.digests])


def _same(before: Snapshot, after: Snapshot, name: str) -> bool:
    old, new = before.entries.get(name), after.entries.get(name)
    if name in before.digests and old is not None and new is not None:
        return old[:3] == new[:3] and before.digests[name] == after.digests.get(name)
    return old == new


def changed(before: Snapshot, after: Snapshot, allowed: Iterable[str] = ()) -> list[str]:
    """Paths (relative to the root) added, removed or changed, minus the `allowed` ones."""
    skip = set(allowed)
    names = set(before.entries) | set(after.entries)
    return sorted(name for name in names if name not in skip and not _same(before, after, name))


def describe(paths: list[str], where: str = "") -> str:
    """`data/.cache/answers, out/x and 3 more`, then where they are when that is said."""
    shown = ", ".join(paths[:_NAMED])
    more = len(paths) - _NAMED
    return f"{shown}{f' and {more} more' if more > 0 else ''}{f' {where}' if where else ''}"
