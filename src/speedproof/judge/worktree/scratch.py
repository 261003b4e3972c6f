"""Scratch folders that a killed process cannot leave behind for good.

Each folder records its owner (pid and start time, as a worktree holder does) and goes when its
block ends. A process killed with SIGKILL cannot run that last step: a campaign killed mid-wave
left its judge's and profiler's folders in /tmp, about 100 of them over a few days of runs.
`sweep_scratch` removes every such folder whose owner is gone; it runs where a judge starts,
where a campaign starts or resumes, and (for the job folders of `cluster/shipping.py`) where a
cluster job starts. A folder without an owner record is not provably ours and is left alone,
unless the caller names a grace after which an unrecorded folder of its prefix is abandoned; a
worktree holder is `cleanup_stale`'s, since git must unregister it first.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from speedproof.judge.worktree.trees import (
    DEFAULT_PREFIX,
    MARKER_NAME,
    TREE_NAME,
    owner_alive,
    remove_tree,
    write_marker,
)


@contextmanager
def scratch_folder(prefix: str = DEFAULT_PREFIX) -> Iterator[Path]:
    """A new folder in the temporary directory, owned by this process, removed on every way out."""
    folder = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        write_marker(folder)
        yield folder
    finally:
        remove_tree(folder)


def sweep_scratch(
    root: Path | None = None,
    *,
    prefix: str = DEFAULT_PREFIX,
    unmarked_grace_s: float | None = None,
) -> list[Path]:
    """Remove the scratch folders under `root` (the temporary directory) whose owner is gone.

    With `unmarked_grace_s`, a folder without an owner record counts as abandoned once it is
    that old (its maker writes the record a moment after making it); without, it is kept.
    """
    removed: list[Path] = []
    for folder in sorted(Path(root or tempfile.gettempdir()).glob(f"{prefix}*")):
        if _abandoned(folder, unmarked_grace_s):
            remove_tree(folder)
            removed.append(folder)
    return removed


def _abandoned(folder: Path, unmarked_grace_s: float | None) -> bool:
    marker = folder / MARKER_NAME
    try:
        if folder.is_symlink() or not folder.is_dir() or (folder / TREE_NAME).exists():
            return False
        if owner_alive(marker):
            return False
        if marker.exists():
            return True
        if unmarked_grace_s is None:
            return False
        return time.time() - folder.stat().st_mtime >= unmarked_grace_s
    except OSError:  # removed meanwhile by another sweep
        return False
