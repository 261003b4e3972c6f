"""Helpers for the `test_edits_*` modules: the examples' real source committed to a real git
repository below a subfolder, so target-relative answers must become repository-relative patches.

Imported by those modules (pytest puts `tests/` on sys.path); it holds no tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from speedproof.agents.answers import OptimizerAnswer
from speedproof.judge.guard.check import check_patch
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.worktree.apply import apply_patch
from speedproof.manifest import Language
from support.git import commit_all, git
from support.paths import ROOT

EXAMPLES = ROOT / "examples"

# Inputs and recorded patches are not source; leaving them out keeps each copy small.
_LEFT_OUT = shutil.ignore_patterns("data", "patches", "__pycache__", "*.pyc")


def example_repo(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(repository root, target folder relative to it) for a committed copy of an example."""
    root = tmp_path / "repo"
    target_rel = Path("examples") / name
    shutil.copytree(EXAMPLES / name, root / target_rel, ignore=_LEFT_OUT)
    git(root, "init", "-q")
    commit_all(root, "base")
    return root, target_rel


def answer(**fields: object) -> OptimizerAnswer:
    return OptimizerAnswer.model_validate({"hypothesis": "it is faster", **fields})


def applies_cleanly(root: Path, patch: str, language: Language) -> None:
    """The patch is already normalised, passes the guard's first pass and applies with git."""
    assert normalise_patch(patch) == patch
    guard = check_patch(patch, ProtectedPaths.build(language))
    assert guard.passed, guard.summary()
    assert apply_patch(root, patch).method == "git"


def changed_lines(patch: str) -> list[str]:
    """The added and removed lines of a patch, headers left out."""
    return [
        line
        for line in patch.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++ ", "--- "))
    ]
