"""Where a candidate patch meets the program: a throwaway worktree, the paths it may not touch,
the two-pass guard and the application of the patch."""

from speedproof.ground.git import CommandRun, repository_root
from speedproof.judge.guard.check import (
    GuardResult,
    Violation,
    ViolationRule,
    check_applied,
    check_patch,
)
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.guard.protected import ProtectedPaths, Rule
from speedproof.workspace.apply import ApplyResult, apply_patch
from speedproof.workspace.scratch import scratch_folder, sweep_scratch
from speedproof.workspace.worktree import Terminated, Worktree, cleanup_stale, resolve_rev, worktree

__all__ = [
    "ApplyResult",
    "CommandRun",
    "GuardResult",
    "ProtectedPaths",
    "Rule",
    "Terminated",
    "Violation",
    "ViolationRule",
    "Worktree",
    "apply_patch",
    "check_applied",
    "check_patch",
    "cleanup_stale",
    "normalise_patch",
    "repository_root",
    "resolve_rev",
    "scratch_folder",
    "sweep_scratch",
    "worktree",
]
