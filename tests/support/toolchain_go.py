"""The Go toy as a checked-out baseline tree, and the body of its `[tests]` table, for the Go
toolchain's tests and the attacks on them."""

from __future__ import annotations

from pathlib import Path

from speedproof.toolchains.base import Tree
from support.toolchain import (
    GO_FILES,
    checkout,
    make_repo,
)

GO_TESTS = 'runner = "go"'


def go_tree(tmp_path: Path, files: dict[str, str] | None = None) -> Tree:
    repo, revision = make_repo(tmp_path / "repo", files or GO_FILES)
    return checkout(repo, revision, "baseline", tmp_path / "wt")
