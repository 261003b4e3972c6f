"""The patch text for edited files, computed from old and new text: the answer never supplies a
hunk position. The format is what `git diff` writes (a `diff --git` line, a/ b/ names, three
lines of context, `\\ No newline at end of file` markers), so the guard reads every header form
it knows and `git apply` takes it at the base revision.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CONTEXT_LINES = 3
NO_NEWLINE = "\\ No newline at end of file\n"


def file_patch(repo_path: str, old: str | None, new: str) -> str:
    """The diff of one file; `old` None means the file is new."""
    header = [f"diff --git a/{repo_path} b/{repo_path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    before = "/dev/null" if old is None else f"a/{repo_path}"
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=before,
        tofile=f"b/{repo_path}",
        n=CONTEXT_LINES,
    )
    body = [line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}" for line in lines]
    return "".join(header + body) if body else ""


def make_patch(changes: Iterable[tuple[str, str | None, str]]) -> str:
    """One patch for every (repository path, old text or None, new text) that differs."""
    return "".join(file_patch(path, old, new) for path, old, new in changes if old != new)
