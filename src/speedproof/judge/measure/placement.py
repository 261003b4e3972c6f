"""A fresh copy of each built file before every measured run, so no side keeps one placement.

Byte-identical copies of a Go binary and its input, run round-robin on one machine, differed
by up to 5.2 % for as long as each copy stayed in memory (8 copies, F test p = 4e-9, right after
the machine's memory had been cycled; ADR 0056). A side that runs one file for a whole
judgement carries that file's offset into every pair, and no paired test can see it. A file
copied anew shares none of its page frames with the file it replaces (0 of 958 pages on this
machine), so a copy before every run turns the offset into per-run noise, which the paired test
does measure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path


def place_afresh(paths: Iterable[Path]) -> None:
    """Replace each file by a copy of itself: same bytes, mode and path, new inode and frames.

    The copy is written beside the file and renamed over it, so the file is whole at every
    moment, and the old inode (no run holds it open) is freed before its dirty pages are ever
    written back. Same path, so argv and everything the run prints stay as they were.
    """
    for path in paths:
        fresh = path.with_name(f".{path.name}.fresh-{os.getpid()}")
        shutil.copy2(path, fresh)
        os.replace(fresh, path)
