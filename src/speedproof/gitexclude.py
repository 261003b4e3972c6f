"""Keep speedproof's own folders out of the user's `git status`.

A ledger written inside the user's repository (`.speedproof/` next to the manifest, by default)
is ours, not theirs: it is named in the repository's `info/exclude`, which git reads like a
`.gitignore` but never commits and never shows as a change. The user's `.gitignore` is never
edited. `git rev-parse --git-common-dir` finds the one `info/exclude` that a main work tree and
all its linked worktrees share; a linked worktree's own git folder has none that git reads.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import decode_path, git


def _work_tree(folder: Path) -> tuple[Path, Path] | None:
    """The work tree holding `folder` and its common git folder; None outside any work tree."""
    try:
        record, out = git(folder, "rev-parse", "--show-toplevel", "--git-common-dir")
    except InfrastructureError:  # git missing or hung: an exclude line is not worth an error
        return None
    lines = decode_path(out).splitlines()
    if not record.ok or len(lines) != 2:
        return None
    top = Path(lines[0]).resolve()
    # Relative to where git ran (".git" from the top of a main work tree), else absolute.
    common = (folder / lines[1]).resolve()
    return top, common


def exclude_from_git(folder: Path) -> Path | None:
    """Name the existing `folder` in its repository's `info/exclude`; the file written, or None
    when `folder` is outside any work tree, is the work tree itself, or is already ignored."""
    found = _work_tree(folder)
    if found is None:
        return None
    top, common = found
    try:
        relative = folder.resolve().relative_to(top)
    except ValueError:
        return None
    if relative == Path("."):
        return None
    pattern = f"/{relative.as_posix()}/"
    exclude = common / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if pattern in text.splitlines() or _ignored(folder):
            return None
        exclude.parent.mkdir(parents=True, exist_ok=True)
        lead = "" if not text or text.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as out:
            out.write(f"{lead}# speedproof's ledger\n{pattern}\n")
    except OSError:  # a read-only repository: the ledger works, git status shows it
        return None
    return exclude


def _ignored(folder: Path) -> bool:
    """Whether git already ignores `folder` (the user's .gitignore, a global excludes file)."""
    try:
        record, _ = git(folder.parent, "check-ignore", "-q", folder.name + "/")
    except InfrastructureError:
        return False
    return record.ok
