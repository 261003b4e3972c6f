from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.worktree.trees import (
    MARKER_NAME,
    Worktree,
    cleanup_stale,
    resolve_rev,
    worktree,
)
from support.git import commit_all, git, git_run, head
from support.workspace import GO_FILES, make_repo, registered_worktrees


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", GO_FILES)


def test_resolve_rev_gives_the_full_sha_of_a_branch_or_abbreviation(repo: Path) -> None:
    sha = head(repo)
    assert resolve_rev(repo, "HEAD") == sha
    assert resolve_rev(repo, sha[:8]) == sha
    assert len(sha) == 40


def test_resolve_rev_names_an_unknown_revision(repo: Path) -> None:
    with pytest.raises(InfrastructureError, match="unknown revision 'no-such-branch'"):
        resolve_rev(repo, "no-such-branch")


def test_resolve_rev_refuses_a_revision_that_git_would_read_as_an_option(repo: Path) -> None:
    with pytest.raises(InfrastructureError, match="not a revision name"):
        resolve_rev(repo, "--all")


def test_resolve_rev_says_when_the_folder_is_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InfrastructureError, match="not inside a git working tree"):
        resolve_rev(plain, "HEAD")
    with pytest.raises(InfrastructureError, match="no such folder"):
        resolve_rev(tmp_path / "missing", "HEAD")


def test_the_worktree_is_a_detached_checkout_of_the_committed_revision(repo: Path) -> None:
    with Worktree.create(repo, "HEAD") as wt:
        assert wt.rev == head(repo)
        assert head(wt.path) == wt.rev
        assert git_run(wt.path, "symbolic-ref", "-q", "HEAD", check=False).returncode != 0
        assert (wt.path / "main.go").read_text() == GO_FILES["main.go"]
        assert wt.path.name == "tree" and wt.holder.name.startswith("speedproof-")


def test_a_dirty_working_tree_in_the_repository_does_not_reach_the_worktree(repo: Path) -> None:
    (repo / "main.go").write_text("package main // uncommitted\n")
    (repo / "untracked.go").write_text("package main\n")
    with worktree(repo, "HEAD") as wt:
        assert (wt.path / "main.go").read_text() == GO_FILES["main.go"]
        assert not (wt.path / "untracked.go").exists()
        assert git(wt.path, "status", "--porcelain", "--ignored") == ""


def test_an_older_revision_can_be_checked_out(repo: Path) -> None:
    first = head(repo)
    (repo / "main.go").write_text("package main\n\nfunc main() {}\n")
    commit_all(repo, "second")
    with worktree(repo, first) as wt:
        assert (wt.path / "main.go").read_text() == GO_FILES["main.go"]


def test_the_worktree_is_removed_after_a_normal_exit(repo: Path) -> None:
    with worktree(repo, "HEAD") as wt:
        assert wt.path.is_dir()
        assert (wt.holder / MARKER_NAME).is_file()
        assert str(wt.path) in registered_worktrees(repo)
    assert not wt.holder.exists()
    assert registered_worktrees(repo) == [str(repo.resolve())]


def test_the_worktree_is_removed_after_an_exception(repo: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), worktree(repo, "HEAD") as wt:
        (wt.path / "main.go").write_text("changed")
        (wt.path / "new.txt").write_text("untracked")
        raise RuntimeError("boom")
    assert not wt.holder.exists()
    assert registered_worktrees(repo) == [str(repo.resolve())]


def test_a_read_only_folder_left_by_a_build_does_not_stop_the_removal(repo: Path) -> None:
    with worktree(repo, "HEAD") as wt:
        cache = wt.path / "cache" / "mod"
        cache.mkdir(parents=True)
        (cache / "f.go").write_text("x")
        cache.chmod(0o500)
        cache.parent.chmod(0o500)
    assert not wt.holder.exists()


def test_the_previous_sigterm_handler_is_restored(repo: Path) -> None:
    def mine(signum: int, frame: object) -> None:
        del signum, frame

    before = signal.signal(signal.SIGTERM, mine)
    try:
        with worktree(repo, "HEAD"):
            assert signal.getsignal(signal.SIGTERM) is not mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)


CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from pathlib import Path
    from speedproof.judge.worktree.trees import worktree

    # SIGINT may arrive ignored from the parent; a user's Ctrl-C must raise here.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with worktree(Path(sys.argv[1]), "HEAD") as wt:
        print(wt.holder, flush=True)
        time.sleep(120)
    """
)


def _start_child(repo: Path) -> tuple[subprocess.Popen[str], Path]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    holder = Path(child.stdout.readline().strip())
    assert holder.is_dir(), child.stderr.read() if child.stderr else ""
    return child, holder


@pytest.mark.timeout(120)
def test_a_child_interrupted_with_sigint_removes_its_worktree(repo: Path) -> None:
    child, holder = _start_child(repo)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert "KeyboardInterrupt" in stderr
    assert not holder.exists()
    assert registered_worktrees(repo) == [str(repo.resolve())]


@pytest.mark.timeout(120)
def test_a_child_terminated_with_sigterm_removes_its_worktree_and_exits_143(repo: Path) -> None:
    child, holder = _start_child(repo)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM
    assert not holder.exists()
    assert registered_worktrees(repo) == [str(repo.resolve())]


@pytest.mark.timeout(120)
def test_cleanup_stale_removes_the_worktree_of_a_killed_process(repo: Path) -> None:
    child, holder = _start_child(repo)
    child.kill()
    child.communicate(timeout=60)
    assert holder.exists(), "SIGKILL leaves the worktree behind; that is what cleanup_stale is for"
    removed = cleanup_stale(repo)
    assert removed == [holder / "tree"]
    assert not holder.exists()
    assert registered_worktrees(repo) == [str(repo.resolve())]


def test_cleanup_stale_leaves_a_live_owners_worktree_alone(repo: Path) -> None:
    with worktree(repo, "HEAD") as wt:
        assert cleanup_stale(repo) == []
        assert wt.path.is_dir()


def test_cleanup_stale_treats_a_worktree_without_an_owner_marker_as_stale(repo: Path) -> None:
    with worktree(repo, "HEAD") as wt:
        (wt.holder / MARKER_NAME).unlink()
        assert cleanup_stale(repo) == [wt.path]
        assert not wt.holder.exists()


def test_cleanup_stale_ignores_worktrees_that_are_not_speedproofs(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "mine"
    git(repo, "worktree", "add", "--detach", str(other), "HEAD")
    assert cleanup_stale(repo) == []
    assert other.is_dir()
