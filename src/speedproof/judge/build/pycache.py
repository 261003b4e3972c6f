"""The byte-code cache a built Python target runs with: its own modules compiled at build, the
interpreter's standard library and packages as installed (docs/adr/0061).

Runs read byte-code from one folder, `PYTHONPYCACHEPREFIX`, where the cache of `/a/b/m.py` is
`<prefix>/a/b/m.<tag>.pyc`. Set, it replaces every `__pycache__` folder, the interpreter's
own included: with only the target's modules in it, a run would compile the standard library
modules it imports on every start (`import argparse, re, csv, collections, json` went from 0.03
to 0.11 s). So the prefix also leads to the interpreter's existing byte-code: a mirror folder
of links, one per `.pyc` in the `__pycache__` folders under the interpreter's import folders,
made once per interpreter and set of installed packages, and a link in each build's prefix to
the mirror of each import folder. Python still checks every `.pyc` against its source (mtime and
size), so a stale link costs a compile in memory, never a wrong module.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

MIRRORS = "pycache-mirror"


def top_folders(folders: Iterable[str]) -> list[Path]:
    """The import folders that exist, without one inside another (its mirror covers it)."""
    found = sorted({Path(f).resolve() for f in folders if os.path.isdir(f)})
    kept: list[Path] = []
    for folder in found:
        if not any(folder.is_relative_to(outer) for outer in kept):
            kept.append(folder)
    return kept


def mirror(caches: Path, interpreter: Path, digest: str, folders: list[Path]) -> Path:
    """The mirror of `folders`' byte-code for `interpreter` with installed packages `digest`,
    made now unless an earlier build made it; several builds may race to make it, and the first
    to rename its finished copy into place wins."""
    key = hashlib.sha256(f"{interpreter}\n{digest}\n{folders}".encode()).hexdigest()[:24]
    home = caches / MIRRORS
    made = home / key
    if made.is_dir():
        return made
    home.mkdir(parents=True, exist_ok=True)
    staging = home / f".staging-{uuid.uuid4().hex}"
    for folder in folders:
        _link_byte_code(folder, staging / folder.relative_to(folder.anchor))
    staging.mkdir(exist_ok=True)
    try:
        staging.rename(made)
    except OSError:
        # Another build finished first: its mirror is the same.
        shutil.rmtree(staging, ignore_errors=True)
    return made


def _link_byte_code(folder: Path, into: Path) -> None:
    """Link each `<dir>/__pycache__/<m>.<tag>.pyc` under `folder` as `into/<dir>/<m>.<tag>.pyc`.

    Optimised byte-code (`.opt-1`, `.opt-2`) is left out: runs are not optimised."""
    for current, dirs, files in os.walk(folder):
        if os.path.basename(current) != "__pycache__":
            continue
        dirs.clear()
        names = [n for n in files if n.endswith(".pyc") and ".opt-" not in n]
        if not names:
            continue
        source_dir = os.path.relpath(os.path.dirname(current), folder)
        target = into / source_dir
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            _link(os.path.join(current, name), target / name)


def _link(source: str, link: Path) -> None:
    """A hard link where the file system allows one (a symbolic link's long target costs a
    4 KiB block: 150 MB for the 37,000 files of a venv with a large package set), else a
    symbolic link."""
    try:
        os.link(source, link)
    except OSError:
        link.symlink_to(source)


def link_mirror(prefix: Path, mirrored: Path, folders: list[Path], worktree: Path) -> None:
    """Point `prefix` at the mirror of each import folder; a folder holding the worktree, or
    inside it, is left out (its own byte-code is the build's to make)."""
    for folder in folders:
        if worktree.is_relative_to(folder) or folder.is_relative_to(worktree):
            continue
        relative = folder.relative_to(folder.anchor)
        link = prefix / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink():
            link.unlink()  # a build folder built into again: the mirror may be a newer one
        link.symlink_to(mirrored / relative, target_is_directory=True)
