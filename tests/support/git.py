"""The one way the tests drive git on the repositories they make.

Every call carries a committer identity, no signing and no hooks, whatever the machine's global
configuration says, and runs without the caller's GIT_* variables: a test started from a git hook
(GIT_DIR, GIT_INDEX_FILE set) would otherwise act on the outer repository instead of its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_IDENTITY = (
    *("-c", "user.name=speedproof", "-c", "user.email=t@example.com"),
    *("-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"),
)


def git_run(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """git `args` in `repo`, the whole run: for a test that reads the exit code or stderr, or
    needs stdout byte for byte (a patch keeps its final newline)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", *_IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=check, env=env
    )


def git(repo: Path, *args: str) -> str:
    """git `args` in `repo`, which must succeed; its stdout without the surrounding whitespace
    (a sha, a status line, a file's text)."""
    return git_run(repo, *args).stdout.strip()


def head(repo: Path) -> str:
    """The full sha of HEAD in `repo`."""
    return git(repo, "rev-parse", "HEAD")


def commit_all(repo: Path, message: str) -> str:
    """Everything in `repo`'s working tree committed as one commit (an empty one if nothing
    changed); returns the commit's full sha."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return head(repo)
