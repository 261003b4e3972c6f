"""Everything that differs between a worktree and its base commit, as git sees it.

Two views, because each misses something: `git status` lists untracked and ignored files but
not what changed against an arbitrary commit, `git diff <base>` lists tracked changes with their
modes (a symlink is mode 120000, a submodule 160000) but never an untracked file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.git import decode_path, git_ok

SYMLINK_MODE = 0o120000
SUBMODULE_MODE = 0o160000
REGULAR_MODES = (0o100644, 0o100755)


@dataclass(frozen=True)
class Change:
    """One changed path (repository-relative, as git printed it).

    `status` is the porcelain XY code (`??` untracked, `!!` ignored) for `git status` entries,
    or the diff letter (M, A, D, T...) for `git diff` entries, which also carry both modes.
    """

    path: str
    status: str
    source: str  # "status" or "diff"
    old_mode: int | None = None
    new_mode: int | None = None

    @property
    def ignored(self) -> bool:
        return self.source == "status" and self.status == "!!"


def list_changes(worktree: Path, base_rev: str) -> list[Change]:
    """Tracked edits, deletions, renames (both sides), untracked files and ignored files."""
    return [*_status_changes(worktree), *_diff_changes(worktree, base_rev)]


def _status_changes(worktree: Path) -> list[Change]:
    out = git_ok(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignored",
        "--no-renames",
        "--ignore-submodules=none",
    )
    fields = out.split(b"\0")
    changes: list[Change] = []
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        status = entry[:2].decode("ascii", "replace")
        changes.append(Change(decode_path(entry[3:]), status, "status"))
        # A rename or copy entry is followed by its source path.
        if ("R" in status or "C" in status) and index < len(fields):
            changes.append(Change(decode_path(fields[index]), status, "status"))
            index += 1
    return changes


def _diff_changes(worktree: Path, base_rev: str) -> list[Change]:
    out = git_ok(
        worktree,
        "diff",
        "--raw",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        base_rev,
        "--",
    )
    fields = out.split(b"\0")
    changes: list[Change] = []
    index = 0
    while index < len(fields):
        meta = fields[index].decode("ascii", "replace")
        index += 1
        if not meta.startswith(":"):
            continue
        # ":<old mode> <new mode> <old sha> <new sha> <status>", then one path (two for R/C).
        old_mode, new_mode, _, _, status = meta[1:].split(" ", 4)
        count = 2 if status[:1] in ("R", "C") else 1
        for raw in fields[index : index + count]:
            changes.append(
                Change(decode_path(raw), status, "diff", int(old_mode, 8), int(new_mode, 8))
            )
        index += count
    return changes
