"""Applying a candidate patch in a worktree: `git apply` first, GNU `patch` only if git refuses.

Git is strict (exact context, no paths through symlinks, none outside the tree); GNU patch
with its default fuzz of 2 forgives the slightly stale context models often write. The
fallback is never silent: the result names the method, keeps every command run, and notes each
hunk either tool placed away from its header's line or with fuzz (`rows.py hunk 1: fuzz 1,
offset 3 lines`). A hunk whose header names a function is then checked to have landed in it
(`landing.check_landings`). Run the guard's first pass before this and its second pass
(`check_applied`) after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from speedproof.ground.errors import InfrastructureError, PatchError
from speedproof.ground.git import CommandRun, git, run_tool
from speedproof.judge.guard.headers import read_headers
from speedproof.judge.guard.patch_names import strip_first
from speedproof.judge.guard.protected import split_parts
from speedproof.judge.worktree.hunks import (
    Landing,
    describe_moves,
    read_file_patches,
    read_landings,
)
from speedproof.judge.worktree.landing import check_landings

Method = Literal["git", "patch"]

GIT_APPLY = ("apply", "--whitespace=nowarn")
# `--verbose` makes git say where it put a hunk it had to move: `Hunk #1 succeeded at 12
# (offset 3 lines).`, the line GNU patch prints unasked.
GIT_APPLY_VERBOSE = (*GIT_APPLY, "--verbose")
# GNU patch's own default fuzz: up to 2 context lines at each end of a hunk may mismatch. With
# 3 lines of context, `--fuzz=3` ignores all of them and lets a hunk land wherever its changed
# lines happen to match, often in another function.
GNU_PATCH = ("patch", "-p1", "--fuzz=2", "--batch", "--forward", "--no-backup-if-mismatch")
_TOOL_NAMES: dict[Method, str] = {"git": "git apply", "patch": "GNU patch"}


@dataclass(frozen=True)
class ApplyResult:
    """How the patch went in: `method`, what the applying tool said, and every command run."""

    method: Method
    stdout: str
    stderr: str
    commands: tuple[CommandRun, ...]
    # Hunks the tool placed away from their header's line or with fuzz, as it reported them,
    # and the same in words for the ledger (`rows.py hunk 1: fuzz 1, offset 3 lines`).
    landings: tuple[Landing, ...] = ()
    fuzz_notes: tuple[str, ...] = ()


def apply_patch(worktree: Path, patch_text: str) -> ApplyResult:
    """Apply a repository-relative (a/… b/…) patch at the top of `worktree`.

    Raises PatchError naming what refused it; InfrastructureError when a tool is missing.
    """
    try:
        data = patch_text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise PatchError(f"the patch text cannot be written as bytes: {exc}") from exc
    check, _ = git(worktree, *GIT_APPLY, "--check", "-", stdin=data)
    if not check.ok:
        return _apply_with_gnu_patch(worktree, patch_text, data, check)
    applied, _ = git(worktree, *GIT_APPLY_VERBOSE, "-", stdin=data)
    if not applied.ok:
        raise PatchError(f"`git apply --check` accepted the patch, then {applied.describe()}")
    return _landed(worktree, patch_text, "git", (check, applied))


def _apply_with_gnu_patch(
    worktree: Path, patch_text: str, data: bytes, git_check: CommandRun
) -> ApplyResult:
    version, _ = run_tool(("patch", "--version"), worktree)
    if not version.ok or "GNU patch" not in version.stdout:
        raise InfrastructureError(
            f"git refused the patch ({git_check.describe()}) and the fallback needs GNU patch, "
            f"but `patch --version` says: {version.describe()}"
        )
    _refuse_writes_through_symlinks(worktree, patch_text, git_check)
    dry, _ = run_tool((*GNU_PATCH, "--dry-run"), worktree, stdin=data)
    if not dry.ok:
        raise PatchError(
            f"git refused the patch ({git_check.describe()}) "
            f"and so did GNU patch ({dry.describe()})"
        )
    applied, _ = run_tool(GNU_PATCH, worktree, stdin=data)
    commands = (git_check, version, dry, applied)
    if not applied.ok:
        raise PatchError(f"GNU patch accepted a dry run, then {applied.describe()}")
    return _landed(worktree, patch_text, "patch", commands)


def _landed(
    worktree: Path, patch_text: str, method: Method, commands: tuple[CommandRun, ...]
) -> ApplyResult:
    """The result of the applying run (the last command), once every named hunk is checked.

    A refused hunk leaves the tree as the tool wrote it: callers throw the worktree away.
    """
    applied = commands[-1]
    files = read_file_patches(patch_text)
    landings = read_landings(f"{applied.stdout}\n{applied.stderr}")
    check_landings(worktree, files, landings, _TOOL_NAMES[method])
    notes = describe_moves(files, landings)
    return ApplyResult(method, applied.stdout, applied.stderr, commands, landings, notes)


def _refuse_writes_through_symlinks(worktree: Path, patch_text: str, git_check: CommandRun) -> None:
    """GNU patch follows a symlink inside the tree (git will not); do not let it.

    The second pass would see the result inside the tree, but a link that leads outside it
    would leave no trace in `git status` at all, so this is refused before patch runs.
    """
    for header in read_headers(patch_text).names:
        for name in (strip_first(header.name), header.name):
            link = _first_symlink(worktree, name)
            if link is not None:
                raise PatchError(
                    f"git refused the patch ({git_check.describe()}) and GNU patch would write "
                    f"{name!r} through the symbolic link {link!r}"
                )


def _first_symlink(worktree: Path, name: str) -> str | None:
    parts = split_parts(name)
    if not parts or name.startswith("/") or ".." in parts:
        return None
    for depth in range(1, len(parts) + 1):
        candidate = worktree.joinpath(*parts[:depth])
        if candidate.is_symlink():
            return "/".join(parts[:depth])
        if not candidate.exists():
            return None
    return None
