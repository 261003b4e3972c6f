"""Helpers for the workspace tests: real git repositories in temporary folders.

Imported by the `test_workspace_*` modules (pytest puts `tests/` on sys.path); it holds no tests.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from speedproof.judge.worktree.apply import GNU_PATCH
from support.git import commit_all, git

GO_FILES = {
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n',
    "main_test.go": 'package main\n\nimport "testing"\n\nfunc TestMain(t *testing.T) {}\n',
    "testdata/x.txt": "hello\n",
    ".gitignore": "build/\n*.tmp\n",
}

PYTHON_FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "",
    "pkg/mod.py": "def double(x):\n    return x + x\n",
    "tests/test_mod.py": "from pkg.mod import double\n\n\ndef test_double():\n"
    "    assert double(2) == 4\n",
    "tests/data/input.txt": "1 2 3\n",
    "conftest.py": "",
    ".gitignore": "build/\n__pycache__/\n",
}


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def make_repo(root: Path, files: dict[str, str], symlinks: dict[str, str] | None = None) -> Path:
    """A repository with one commit holding `files` and `symlinks` (name -> target)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    write_files(root, files)
    for name, target in (symlinks or {}).items():
        (root / name).symlink_to(target)
    commit_all(root, "base")
    return root


def registered_worktrees(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def run_gnu_patch(tree: Path, patch: str) -> subprocess.CompletedProcess[str]:
    """GNU patch exactly as the fallback runs it, without speedproof in the way."""
    return subprocess.run(
        list(GNU_PATCH),
        cwd=tree,
        input=patch,
        capture_output=True,
        text=True,
        check=False,
    )


def run_git_apply_check(tree: Path, patch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=tree,
        input=patch,
        capture_output=True,
        text=True,
        check=False,
    )
