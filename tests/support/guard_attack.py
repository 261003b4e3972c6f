"""Candidate patches of the bundled examples, made with git and put through both guard passes.

A patch is made the way a candidate's is: files written in a throwaway worktree of the example's
own repository and diffed against its commit. The guard then judges it as the judge does: the
patch text first, then (when the text passes) the tree it applies to.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.judge.guard.check import GuardResult, Violation, check_applied, check_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import worktree
from speedproof.manifest_loading import load_manifest
from support.git import git, git_run
from support.workspace import write_files


def example_repo(name: str, into: Path) -> Path:
    """The bundled example `name` as a fresh repository of its own under `into`."""
    return materialise(get_example(name), into)


def edited(repo: Path, path: str, old: str, new: str) -> str:
    """The committed `path` of `repo` with its one `old` replaced by `new`."""
    text = (repo / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    return text.replace(old, new)


def make_patch(repo: Path, files: dict[str, str]) -> str:
    """The `git diff` a candidate writing `files` (path -> new text) would send."""
    with worktree(repo, "HEAD") as tree:
        write_files(tree.path, files)
        git(tree.path, "add", "-A")
        return git_run(tree.path, "diff", "--cached", "HEAD").stdout


def guard(repo: Path, patch: str) -> GuardResult:
    """The first pass's result when it refuses, else the second pass's on the applied tree."""
    protected = ProtectedPaths.for_manifest(load_manifest(repo))
    first = check_patch(patch, protected)
    if not first.passed:
        return first
    with worktree(repo, "HEAD") as tree:
        apply_patch(tree.path, patch)
        return check_applied(tree.path, "HEAD", protected)


def refused_for(result: GuardResult, rule: str) -> list[Violation]:
    found = [v for v in result.violations if v.rule == rule]
    assert found, f"no {rule!r} among: {result.summary()}"
    return found
