"""The source files a candidate changed, and which of their lines it added.

A line is added when the candidate's file has it and the base commit's does not, as a line
diff (`difflib`) matches them up: a file new to the tree is added whole. The code checks report
only constructs that touch an added line, so what the base already did is never held against a
candidate.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.git import git
from speedproof.judge.guard.changes import list_changes
from speedproof.judge.guard.protected import ProtectedPaths

# The languages whose added code the guard reads, by file suffix.
SUFFIXES = {".py": "python", ".go": "go"}


@dataclass(frozen=True)
class AddedSource:
    path: str  # repository-relative
    language: str
    text: str
    added: frozenset[int]  # 1-based line numbers

    def touches(self, first: int, last: int) -> bool:
        """Whether any of lines `first`..`last` was added."""
        return any(line in self.added for line in range(first, last + 1))


def added_sources(root: Path, base_rev: str, protected: ProtectedPaths) -> list[AddedSource]:
    """Every changed, unprotected Python or Go file in the worktree `root`, with its added lines.

    Protected files are refused by their path already; deleted files and links add no code.
    """
    found: list[AddedSource] = []
    paths = dict.fromkeys(change.path for change in list_changes(root, base_rev))
    for path in paths:
        language = SUFFIXES.get(Path(path).suffix)
        full = root / path
        if language is None or protected.is_protected(path):
            continue
        if full.is_symlink() or not full.is_file():
            continue
        text = full.read_text(encoding="utf-8", errors="replace")
        base = _base_text(root, base_rev, path)
        found.append(AddedSource(path, language, text, _added_lines(base, text)))
    return found


def _base_text(root: Path, base_rev: str, path: str) -> str:
    """The file at the base commit; "" for a file the base does not have."""
    run, out = git(root, "cat-file", "blob", f"{base_rev}:{path}")
    return out.decode("utf-8", errors="replace") if run.ok else ""


def _added_lines(old: str, new: str) -> frozenset[int]:
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    added: set[int] = set()
    for tag, _, _, first, last in matcher.get_opcodes():
        if tag in ("insert", "replace"):
            added.update(range(first + 1, last + 1))
    return frozenset(added)
