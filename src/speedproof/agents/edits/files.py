"""Target-relative paths in an answer, checked and read at the base revision.

Answers name files relative to the target folder (`worktree/target_rel`); patches name them
relative to the repository root. A name is refused before anything is read when it is absolute,
climbs out with `..`, or resolves outside the target folder through a symbolic link.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from speedproof.agents.edits.result import EditRejected
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.manifest import Language

# Folders never searched for a function: tools' caches and installed packages.
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "venv"})


@dataclass(frozen=True)
class TargetFile:
    """One file of the target: its name in the answer, in the repository, and on disk."""

    name: str  # target-relative, as the answer wrote it (normalised)
    repo_path: str  # repository-relative POSIX path, as a patch header carries it
    path: Path


class TargetFiles:
    """The target folder of a checkout at the base revision."""

    def __init__(self, worktree: Path, target_rel: Path) -> None:
        self.worktree = worktree.resolve()
        self.target_rel = posixpath.normpath(Path(target_rel).as_posix()).strip("/")
        if self.target_rel == ".":
            self.target_rel = ""
        self.root = (self.worktree / self.target_rel).resolve()

    def locate(self, name: str, *, must_exist: bool = True) -> TargetFile:
        """The file `name` (target-relative); EditRejected when it is outside or missing."""
        clean = posixpath.normpath(name.strip().replace("\\", "/"))
        if name.strip().startswith("/") or clean == ".." or clean.startswith("../"):
            raise EditRejected(
                "outside-target",
                f"{name!r} is not inside the target folder; give paths relative to it",
            )
        if any(ord(char) < 32 or char == '"' for char in clean):
            raise EditRejected("path-unsupported", f"{name!r} holds a control character or quote")
        path = self.root / clean
        real = Path(os.path.realpath(path))
        if real != self.root and self.root not in real.parents:
            raise EditRejected("outside-target", f"{name!r} leads outside the target folder")
        if must_exist and not path.is_file():
            where = f"the target folder {self.target_rel!r}" if self.target_rel else "the target"
            raise EditRejected(
                "file-missing", f"{name!r} is not a file in {where} (paths are relative to it)"
            )
        repo_path = posixpath.join(self.target_rel, clean) if self.target_rel else clean
        return TargetFile(clean, repo_path, path)

    def read(self, file: TargetFile) -> str:
        """The file's text at the base revision, byte for byte (line endings kept)."""
        try:
            return file.path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as err:
            raise EditRejected("file-missing", f"{file.name!r} is not UTF-8 text: {err}") from err

    def sources(self, suffix: str, language: Language) -> Iterator[TargetFile]:
        """Every unprotected `suffix` file under the target folder, in sorted order.

        Tests and test data are skipped with the language's protected-path rules: a function
        found there could not be changed anyway.
        """
        protected = ProtectedPaths.build(language)
        for path in sorted(self.root.rglob(f"*{suffix}")):
            relative = path.relative_to(self.root)
            if any(part.startswith(".") or part in _SKIPPED_FOLDERS for part in relative.parts):
                continue
            name = relative.as_posix()
            if path.is_file() and not path.is_symlink() and not protected.is_protected(name):
                yield self.locate(name)
