"""A bundled example checked out twice, as the judge would: the baseline and a candidate.

Imported by the harness attack tests; it holds no tests. The example is copied into a fresh git
repository (`speedproof.examples.materialise`), the candidate worktree gets a bundled patch
applied with `git apply` and then the attack's files, and the real test gate runs both sides.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.ground.toolchain import TargetToolchain, TestRun
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.tests.gate import TestGateResult, gate_tests
from speedproof.manifest_loading import load_manifest
from support.git import git
from support.toolchain import Pair, caches, checkout, sandbox, write_files


def example_pair(tmp_path: Path, name: str) -> Pair:
    repo = materialise(get_example(name), tmp_path / "repo")
    revision = git(repo, "rev-parse", "HEAD")
    return Pair(
        repo=repo,
        revision=revision,
        baseline=checkout(repo, revision, "baseline", tmp_path / "baseline"),
        candidate=checkout(repo, revision, "candidate", tmp_path / "candidate"),
    )


def patched(p: Pair, bundled: str | None, files: dict[str, str]) -> None:
    """The candidate: one of the example's bundled patches (by stem), then the attack's files."""
    if bundled is not None:
        patch = get_example(p.repo.name).folder / "patches" / f"{bundled}.patch"
        git(p.candidate.root, "apply", str(patch))
    write_files(p.candidate.root, files)


def example_toolchain(p: Pair) -> TargetToolchain:
    return toolchain_for(load_manifest(p.repo).manifest, sandbox(), caches=caches())


def gate(p: Pair, tmp_path: Path) -> tuple[TestGateResult, TestRun, TestRun]:
    return gate_tests(
        example_toolchain(p),
        p.baseline,
        p.candidate,
        revision=p.revision,
        cache_dir=tmp_path / "cache",
    )
