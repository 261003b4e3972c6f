"""After writing: the checks of `speedproof manifest validate`, and what the judge will need from
git (a repository, and the workload inputs committed: the judge runs a checkout of a commit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.errors import InfrastructureError, SpeedproofError
from speedproof.ground.git import decode_path, git, repository_root
from speedproof.manifest_loading import load_manifest


@dataclass(frozen=True)
class Validation:
    valid: bool
    # What `manifest validate` would print: the `valid …` line, or the problems it names.
    message: str


def validate(path: Path) -> Validation:
    """Exactly `speedproof manifest validate`: the schema, then `preflight.check`."""
    from speedproof.preflight import check, describe

    try:
        loaded = load_manifest(path)
    except SpeedproofError as exc:
        return Validation(False, str(exc))
    problems = check(loaded)
    if problems:
        return Validation(False, describe(loaded, problems))
    manifest = loaded.manifest
    tiers = ", ".join(f"{w.id} ({w.tier})" for w in manifest.workloads)
    said = f"valid {loaded.path}: {manifest.target.name} ({manifest.target.language})"
    return Validation(True, f"{said}\nworkloads: {tiers}")


def uncommitted(root: Path, names: Sequence[str]) -> list[str]:
    """Advice for the judge's checkout: no repository, or inputs git does not track."""
    try:
        top = repository_root(root)
    except InfrastructureError:
        return [
            f"{root} is not in a git repository: the judge applies patches in git worktrees, "
            "so run `git init` and commit the project"
        ]
    record, out = git(top, "ls-files", "-z", "--", *(str((root / n).resolve()) for n in names))
    tracked = {Path(top, decode_path(p)).resolve() for p in out.split(b"\0") if p}
    missing = [n for n in names if (root / n).resolve() not in tracked]
    if not record.ok or not missing:
        return []
    return [
        f"not committed: {', '.join(missing)}; the judge runs a checkout of a commit, so "
        "commit them before judging"
    ]
