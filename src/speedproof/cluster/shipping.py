"""Sending a revision and a few files to a node that shares nothing with the driver but the
network, and the folder a job keeps them in.

A revision travels as a git bundle (bytes): the commit and its history, made without touching
the repository's refs (a scratch bare repository borrows its objects and names the commit
there). On the node it is unpacked into a folder of the job's own. While a job runs, that folder
is also where everything the job makes with `tempfile` goes (the judge's worktrees, build
folders and scratch), so removing it removes all of them: on every way out of the job, and, for
a worker killed outright (SIGKILL, out of memory), by the next job on that machine, which sweeps
the folders whose owner process is gone.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import git_ok
from speedproof.judge.worktree.scratch import scratch_folder, sweep_scratch
from speedproof.judge.worktree.trees import resolve_rev

# The name the bundled commit travels under (in the scratch repository and the bundle only).
BUNDLE_REF = "refs/heads/speedproof-shipped"
JOB_PREFIX = "speedproof-job-"
# A job folder is made a moment before its owner marker is written; a folder without a marker
# is left alone for this long, so a sweep never removes a folder that is being set up.
UNMARKED_GRACE_S = 600.0


def bundle_revision(repo: Path, rev: str) -> bytes:
    """A git bundle of the commit `rev` names in `repo`, with its history."""
    sha = resolve_rev(repo, rev)
    common = git_ok(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    objects = Path(common.decode("utf-8", "surrogateescape").strip()) / "objects"
    with scratch_folder("speedproof-bundle-") as scratch:
        bare = scratch / "repo.git"
        git_ok(scratch, "init", "-q", "--bare", str(bare))
        (bare / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
        git_ok(bare, "update-ref", BUNDLE_REF, sha)
        out = Path(scratch) / "rev.bundle"
        git_ok(bare, "bundle", "create", "-q", str(out), BUNDLE_REF)
        return out.read_bytes()


def unpack_revision(bundle: bytes, rev: str, into: Path) -> Path:
    """A repository at `into` with the bundled commit checked out (detached); it must be `rev`."""
    into.mkdir(parents=True)
    file = into.parent / f"{into.name}.bundle"
    file.write_bytes(bundle)
    return unpack_bundle_file(file, rev, into)


def unpack_bundle_file(file: Path, rev: str, into: Path) -> Path:
    """`unpack_revision` from a bundle already on disk (a node's cached copy)."""
    into.mkdir(parents=True, exist_ok=True)
    git_ok(into, "init", "-q")
    git_ok(into, "fetch", "-q", str(file), BUNDLE_REF)
    git_ok(into, "checkout", "-q", "--detach", rev)
    got = resolve_rev(into, "HEAD")
    if got != rev:
        raise InfrastructureError(f"the shipped bundle holds {got}, not the revision {rev}")
    return into


def pack_folder(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative path -> content): a holdout folder, sent along."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def unpack_folder(files: dict[str, bytes], into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = (into / name).resolve()
        if not path.is_relative_to(into.resolve()):
            raise InfrastructureError(f"a shipped file would land outside its folder: {name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return into


@contextmanager
def job_folder() -> Iterator[Path]:
    """A folder of this job's own, which `tempfile` uses for the job's length; removed after."""
    sweep_dead_jobs()
    saved = tempfile.tempdir
    with scratch_folder(JOB_PREFIX) as folder:
        tempfile.tempdir = str(folder)
        try:
            yield folder
        finally:
            tempfile.tempdir = saved


def sweep_dead_jobs(parent: Path | None = None) -> list[Path]:
    """Remove job folders whose owner process is gone; returns what was removed."""
    return sweep_scratch(parent, prefix=JOB_PREFIX, unmarked_grace_s=UNMARKED_GRACE_S)
