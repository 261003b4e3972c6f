"""The links a path passes through on its way to a real file, and the folders a sandbox must
show so that the path resolves inside it as it does outside.

A venv is often reached through a linked folder (`.venv -> ../envs/x`) and its `bin/python` is
a link again (`-> /usr/bin/python3.11`). Inside the sandbox every link on the way must exist, or
exec fails with `bwrap: execvp …/.venv/bin/python: No such file or directory`; showing only the
folders the path resolves to misses the linked folder, which the path still names.
"""

from __future__ import annotations

import os
from pathlib import Path

# Linux follows at most 40 links resolving one path (MAXSYMLINKS); a longer chain is a loop.
MAX_HOPS = 40


def visited_links(path: Path) -> list[Path]:
    """Every link that resolving `path` passes through, in order, each named by the path it is
    reached by (the folders before it already resolved): linked folders as well as linked files.

    Resolved as the kernel does, one name at a time, so `..` after a linked folder steps out of
    the folder the link leads to. A chain longer than MAX_HOPS stops there: the kernel refuses it
    too (ELOOP), and the interpreter's own probe names that failure.
    """
    start = path if path.is_absolute() else Path.cwd() / path
    pending = list(start.parts[1:])
    current = Path("/")
    links: list[Path] = []
    while pending and len(links) < MAX_HOPS:
        name = pending.pop(0)
        if name == "..":
            current = current.parent
            continue
        step = current / name
        if not step.is_symlink():
            current = step
            continue
        links.append(step)
        target = Path(os.readlink(step))
        if target.is_absolute():
            current = Path("/")
        pending[:0] = [part for part in target.parts if part != "/"]
    return links


def linked_folders(path: Path) -> list[Path]:
    """The folders to show read-only for `path` to resolve in a sandbox: each linked folder at
    the path it is reached by (bound there, it shows what it leads to) and what it resolves to
    (in case the folder holding the link is shown too, and the link itself is what is seen),
    and the folder holding each linked file."""
    shown: list[Path] = []
    for link in visited_links(path):
        if link.is_dir():
            shown += [link, link.resolve()]
        else:
            shown.append(link.parent)
    return shown
