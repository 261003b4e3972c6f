"""The ledger a judgement writes inside the user's repository stays out of `git status`.

Real repositories in temporary folders and the real command: the ledger's folder is named in
the repository's `.git/info/exclude` (shared by every worktree), never in a `.gitignore`, and the
judge's human output says where the ledger is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from support.git import commit_all, git

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
ATTACK = get_example("logstat").folder / "patches" / "attack-edit-test.patch"


def _judge(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The guard refuses this patch before anything is built: the ledger is all it writes.
    return subprocess.run(
        [*SPEEDPROOF, "judge", str(ATTACK), "--no-sandbox", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def logstat(tmp_path: Path) -> Path:
    return materialise(get_example("logstat"), tmp_path)


def test_after_a_judgement_git_status_does_not_list_the_ledger(logstat: Path) -> None:
    done = _judge(logstat)
    assert done.returncode == 1, done.stderr
    assert (logstat / ".speedproof" / "ledger.sqlite").is_file()
    assert git(logstat, "status", "--porcelain") == ""
    assert "/.speedproof/" in (logstat / ".git" / "info" / "exclude").read_text().splitlines()
    assert not (logstat / ".gitignore").exists()


def test_the_human_output_says_where_the_ledger_is(logstat: Path) -> None:
    done = _judge(logstat)
    assert done.returncode == 1, done.stderr
    ledger = (logstat / ".speedproof").resolve()
    assert f"candidate #1 in the ledger {ledger} " in done.stdout
    assert f"speedproof ledger show 1 --ledger {ledger}" in done.stdout


def test_judging_twice_names_the_ledger_once(logstat: Path) -> None:
    for _ in range(2):
        assert _judge(logstat).returncode == 1
    lines = (logstat / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines.count("/.speedproof/") == 1


def test_a_ledger_in_a_linked_worktree_is_excluded_in_the_shared_info_exclude(
    logstat: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(logstat, "worktree", "add", "-q", str(linked))
    assert _judge(linked).returncode == 1
    assert (linked / ".speedproof" / "ledger.sqlite").is_file()
    assert git(linked, "status", "--porcelain") == ""
    assert "/.speedproof/" in (logstat / ".git" / "info" / "exclude").read_text().splitlines()
    assert not (linked / ".gitignore").exists()


def test_a_target_in_a_subfolder_gets_its_own_ledger_path_excluded(tmp_path: Path) -> None:
    repo = tmp_path / "mono"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    materialise(get_example("logstat"), tmp_path / "staging")
    target = repo / "services" / "logstat"
    target.parent.mkdir()
    (tmp_path / "staging" / "logstat").rename(target)
    shutil.rmtree(target / ".git")
    commit_all(repo, "monorepo")
    patch = tmp_path / "attack.patch"
    text = (
        ATTACK.read_text()
        .replace(" a/", " a/services/logstat/")
        .replace(" b/", " b/services/logstat/")
    )
    patch.write_text(text)
    done = subprocess.run(
        [*SPEEDPROOF, "judge", str(patch), "--no-sandbox", "-m", str(target)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert (target / ".speedproof" / "ledger.sqlite").is_file()
    assert git(repo, "status", "--porcelain") == ""
    excluded = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/services/logstat/.speedproof/" in excluded


def test_a_ledger_outside_the_repository_touches_no_exclude_file(
    logstat: Path, tmp_path: Path
) -> None:
    before = (logstat / ".git" / "info" / "exclude").read_text()
    assert _judge(logstat, "--ledger", str(tmp_path / "elsewhere")).returncode == 1
    assert (logstat / ".git" / "info" / "exclude").read_text() == before
