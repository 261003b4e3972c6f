"""The project's own source files, without what belongs to tools: venvs, caches, vendored code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

# Folders that hold no code of the project's own: dependencies, build output and caches.
SKIPPED = frozenset(
    {"node_modules", "__pycache__", "build", "dist", "vendor", "testdata", "site-packages"}
)
# A scan stops after this many files: a checkout with more is a monorepo, and the benchmarks and
# `package main` files listed in comments are a courtesy, not something the manifest needs.
MAX_FILES = 5000


def _skipped(folder: Path, name: str) -> bool:
    if name.startswith(".") or name in SKIPPED or name.endswith(".egg-info"):
        return True
    # A virtual environment, whatever its name: Python writes pyvenv.cfg at its top.
    return (folder / name / "pyvenv.cfg").is_file()


def source_files(root: Path, suffix: str) -> Iterator[Path]:
    """Files under `root` ending in `suffix`, in a stable order, skipping tool folders."""
    seen = 0
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not _skipped(here, d))
        for name in sorted(names):
            if not name.endswith(suffix):
                continue
            seen += 1
            if seen > MAX_FILES:
                return
            yield here / name


def read_text(path: Path) -> str:
    """A source file's text; undecodable bytes replaced, an unreadable file read as empty."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def where(path: Path, root: Path, line: int) -> str:
    return f"{path.relative_to(root).as_posix()}:{line}"
