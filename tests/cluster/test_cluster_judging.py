"""Judging one candidate on a node: the revision travels as a git bundle, the node judges it in a
folder of its own with the real judge against a recording stand-in of the ledger, and the driver
replays what it recorded into its own ledger in one transaction. Here on the local back end (a
spawned worker process), with the toy target of `cluster_toy`; no timed run is needed, so the
module takes seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from speedproof.cluster import LocalCluster, measuring_on
from speedproof.cluster.judging import Judged, JudgeJob, Shipper, judge_on_node
from speedproof.cluster.recording import Call, RecordingLedger, replay
from speedproof.cluster.shipping import (
    JOB_PREFIX,
    bundle_revision,
    sweep_dead_jobs,
    unpack_revision,
)
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.cluster_toy import patch_of, toy_repo
from support.git import commit_all, git, git_run

# A change to a protected test file: the guard refuses it before anything is built.
REFUSED = ("        assert count(10) == 10\n", "        assert count(10) >= 0\n")
# A change that fails the target's own tests: built and tested on both sides, then rejected.
BREAKS_TESTS = ("    found = word in NOISE\n", "    found = False\n")


def _refused_patch(repo: Path) -> str:
    test = repo / "tests" / "test_core.py"
    text = test.read_text(encoding="utf-8")
    test.write_text(text.replace(*REFUSED), encoding="utf-8")
    try:
        return git(repo, "diff") + "\n"
    finally:
        git(repo, "checkout", "--", ".")


def _job_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(f"{JOB_PREFIX}*"))


def _on_a_node(
    job: JudgeJob, task: Callable[[JudgeJob], Judged] = judge_on_node
) -> tuple[Judged, int]:
    """`job` judged by a local worker holding the machine's slot; the result and the restarts."""
    cluster = LocalCluster(1)
    with cluster, cluster.batch(task) as batch:
        batch.submit(job, measuring_on(cluster.nodes()[0]))
        finished = batch.next_finished()
    assert finished.ok and isinstance(finished.value, Judged), finished.error
    return finished.value, cluster.restarts


def test_a_judgement_made_on_a_node_lands_as_the_same_record_a_judgement_here_makes(
    tmp_path: Path,
) -> None:
    repo = toy_repo(tmp_path / "toy")
    patch = patch_of(repo, *BREAKS_TESTS)
    loaded = load_manifest(repo / "speedproof.toml")
    options = JudgeOptions(base="HEAD", origin="judge")
    before = _job_folders()
    with Ledger.in_folder(tmp_path / "there") as there, Ledger.in_folder(tmp_path / "here") as here:
        shipper = Shipper(loaded, unsandboxed=False)
        judged, _ = _on_a_node(shipper.job(patch, options))
        landed = there.show(shipper.land(judged, there))
        local = Judge(loaded, sandbox=make_sandbox(), ledger=here, options=options).judge(patch)
        made_here = here.show(local.ledger_id)
    assert judged.verdict == local.verdict.verdict == "rejected"
    assert judged.reasons == local.verdict.reasons
    assert [(g["name"], g["passed"]) for g in landed["gates"]] == [
        (g["name"], g["passed"]) for g in made_here["gates"]
    ]
    assert ("tests", False) in [(g["name"], g["passed"]) for g in landed["gates"]]
    assert landed["verdict"]["reasons"] == made_here["verdict"]["reasons"]
    assert [c["stage"] for c in landed["commands"]] == [c["stage"] for c in made_here["commands"]]
    # The row names the driver's repository and base, never the node's copy, and says where.
    assert (landed["repo"], landed["base_rev"]) == (made_here["repo"], made_here["base_rev"])
    node = landed["facts"]["node"]
    assert node["id"] == "local" and node["hostname"]
    assert node["environment"]["cpu_model"] == landed["facts"]["machine"]["cpu_model"]
    assert "node" not in made_here["facts"]
    assert _job_folders() <= before  # the node's folder, its copy and worktrees are gone


@dataclass(frozen=True)
class JudgeThenDie:
    """Judges, then kills its own worker before the result can leave, once (the marker says
    whether it did): everything was recorded on the node and nothing reached the driver."""

    marker: str

    def __call__(self, job: JudgeJob) -> Judged:
        judged = judge_on_node(job)
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return judged
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable: the worker is dead")


def test_a_worker_killed_mid_judgement_has_the_job_run_again_and_the_candidate_landed_once(
    tmp_path: Path,
) -> None:
    repo = toy_repo(tmp_path / "toy")
    shipper = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False)
    job = shipper.job(_refused_patch(repo), JudgeOptions(base="HEAD"))
    marker = tmp_path / "died"
    judged, restarts = _on_a_node(job, JudgeThenDie(str(marker)))
    with Ledger.in_folder(tmp_path / "ledger") as book:
        shipper.land(judged, book)
        rows = book.query("SELECT id FROM candidates")
        gates = book.query("SELECT name, passed FROM gates")
    assert marker.exists() and restarts == 1
    assert judged.verdict == "rejected"
    assert len(rows) == 1
    assert [(g["name"], g["passed"]) for g in gates] == [("guard", 0)]


def test_a_replay_with_a_stray_write_lands_nothing_at_all(tmp_path: Path) -> None:
    book = RecordingLedger()
    stand_in = book.start_candidate(
        origin="judge",
        target="toy",
        repo=tmp_path,
        base_rev="0" * 40,
        patch_sha256="",
        diff="",
        sandbox="none",
        facts={},
    )
    book.add_gate(stand_in, "guard", True, 0.0, {})
    calls = [*book.calls, Call("executescript", stand_in, ("DROP TABLE candidates",))]
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        with pytest.raises(InfrastructureError, match="stray 'executescript'"):
            replay(calls, ledger, repo=tmp_path, node={"id": "n"})
        assert ledger.query("SELECT id FROM candidates") == []
        assert ledger.query("SELECT name FROM gates") == []
        assert replay(book.calls, ledger, repo=tmp_path, node={"id": "n"}) == 1


def test_a_bundle_carries_one_revision_and_its_history_and_leaves_the_repository_alone(
    tmp_path: Path,
) -> None:
    repo = toy_repo(tmp_path / "toy")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "later.txt").write_text("later\n", encoding="utf-8")
    commit_all(repo, "later")
    refs = git(repo, "for-each-ref")
    copy = unpack_revision(bundle_revision(repo, first), first, tmp_path / "node" / "repo")
    assert git(copy, "rev-parse", "HEAD") == first
    assert (copy / "toy" / "core.py").read_bytes() == (repo / "toy" / "core.py").read_bytes()
    assert not (copy / "later.txt").exists()
    later = git(repo, "rev-parse", "HEAD")
    missing = git_run(copy, "cat-file", "-e", later, check=False)
    assert missing.returncode != 0  # the later commit did not travel
    assert git(repo, "for-each-ref") == refs  # no ref was made to bundle it


def test_a_job_that_fails_on_its_node_leaves_no_folder_behind(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    shipper = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False)
    job = shipper.job(_refused_patch(repo), JudgeOptions(base="HEAD"))
    before = _job_folders()
    with pytest.raises(InfrastructureError, match="is not a tree"):
        judge_on_node(replace(job, base_rev="0" * 40))
    assert _job_folders() <= before


def test_the_folder_of_a_killed_job_is_swept_by_the_next_and_a_live_ones_is_kept(
    tmp_path: Path,
) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal, tempfile
        tempfile.tempdir = {str(tmp_path)!r}
        from speedproof.cluster.shipping import job_folder
        with job_folder() as folder:
            print(folder, flush=True)
            if os.environ.get("DIE"):
                os.kill(os.getpid(), signal.SIGKILL)
            input()
        """
    )
    killed = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "DIE": "1"}, capture_output=True, text=True
    )
    assert killed.returncode == -signal.SIGKILL
    dead = Path(killed.stdout.strip())
    assert dead.is_dir()  # a SIGKILL leaves the folder behind
    live = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert live.stdout is not None
    alive = Path(live.stdout.readline().strip())
    try:
        assert not dead.exists()  # the next job on the machine swept it first
        assert sweep_dead_jobs(tmp_path) == [] and alive.is_dir()  # a live job's folder stays
    finally:
        live.communicate("\n", timeout=60)
    assert not alive.exists()  # removed on its way out
