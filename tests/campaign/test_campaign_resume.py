"""Killing, stopping and resuming `speedproof optimize`: nothing lost, no budget reset, no stray
worktree. The campaign runs as a real subprocess; the signals are real."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.campaign import (
    FROZENSET_ANSWER,
    MODEL,
    NO_CAUSES,
    NOTHING_LEFT,
    PICK_IS_STOP,
    PROCEED,
    SPEEDPROOF,
    Script,
    events,
    exit_condition,
    optimize,
    rows,
    verdicts,
    wordfreq_repo,
    worktrees,
)
from support.model_server import ModelServer


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=[MODEL]) as running:
        yield running


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*SPEEDPROOF, "optimize", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_until_measuring(folder: Path, proc: subprocess.Popen[str]) -> None:
    """Until a candidate with no verdict has samples in the ledger: it is being judged."""
    database = folder / "ledger.sqlite"
    for _ in range(3000):
        if proc.poll() is not None:
            raise AssertionError(f"the campaign ended first: {proc.communicate()}")
        if database.exists() and _measuring(folder):
            return
        time.sleep(0.05)
    raise AssertionError("no candidate was ever measured")


def _measuring(folder: Path) -> bool:
    try:
        return bool(
            rows(
                folder,
                "SELECT c.id FROM candidates c JOIN samples s ON s.candidate_id = c.id"
                " LEFT JOIN verdicts v ON v.candidate_id = c.id WHERE v.candidate_id IS NULL",
            )
        )
    except sqlite3.OperationalError:
        return False  # the ledger's tables are still being made


def test_a_killed_campaign_resumes_with_nothing_lost_and_no_budget_reset(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    folder = tmp_path / "campaign"
    script = Script(
        {
            "coordinator": [PICK_IS_STOP, NOTHING_LEFT],
            "analyst": [NO_CAUSES],
            "optimizer": [FROZENSET_ANSWER],
            "reviewer": [PROCEED],
        }
    )
    server.answer_with(script)
    proc = _start(
        "-m",
        str(repo),
        "--model",
        f"openai:{MODEL}",
        "--base-url",
        server.openai_url,
        "--no-stability-check",
        "--max-candidates",
        "1",
        "--out",
        str(folder),
    )
    _wait_until_measuring(folder, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert len(worktrees(repo)) > 1, "a SIGKILL leaves the judge's worktrees behind"
    before = rows(folder, "SELECT * FROM candidates ORDER BY id")
    calls_before = rows(folder, "SELECT * FROM role_calls ORDER BY id")
    assert len(before) == 1 and verdicts(folder) == [(1, None, "")]
    assert [c["role"] for c in calls_before] == ["coordinator", "analyst", "optimizer", "reviewer"]
    requests = len(server.chat_requests)

    done = optimize("--resume", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    # The killed candidate was judged again from its recorded diff, without a model call, and
    # the budget of one candidate was already spent: nothing new was proposed.
    assert len(server.chat_requests) == requests
    after = rows(folder, "SELECT * FROM candidates ORDER BY id")
    assert after[0] == before[0]
    assert [c["id"] for c in after] == [1, 2] and after[1]["diff"] == before[0]["diff"]
    assert [v for _, v, _ in verdicts(folder)] == [None, "accepted"], verdicts(folder)
    rejudged = [e for e in events(folder, "candidate") if e["candidate_id"] == 2]
    assert rejudged[0]["body"]["rejudge_of"] == 1
    assert rows(folder, "SELECT * FROM role_calls ORDER BY id") == calls_before
    resumed = events(folder, "resume")
    assert len(resumed) == 1 and len(resumed[0]["body"]["removed_worktrees"]) >= 2
    assert exit_condition(folder) == "budget-candidates"
    assert "1 candidates proposed" in events(folder, "exit")[-1]["body"]["message"]
    assert len(worktrees(repo)) == 1
    assert len(events(folder, "accepted")) == 1


@pytest.mark.slow
def test_sigterm_while_judging_leaves_no_worktree_and_the_campaign_resumable(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    folder = tmp_path / "campaign"
    proc = _start("-m", str(repo), "--no-stability-check", "--out", str(folder))
    _wait_until_measuring(folder, proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert len(worktrees(repo)) == 1
    assert exit_condition(folder) == "interrupted"
    ((_, verdict, _),) = verdicts(folder)
    assert verdict is None
    error = rows(folder, "SELECT error FROM verdicts")[0]["error"]
    assert error.startswith("Terminated")
    # The stopped candidate is judged again on resume; the budget of one is then spent.
    done = optimize("--resume", str(folder), "--max-candidates", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [v for _, v, _ in verdicts(folder)] == [None, "accepted"]
    assert exit_condition(folder) == "budget-candidates"
    assert len(worktrees(repo)) == 1


# About 16 s: two campaign sessions; `make test-slow` (the killed-campaign resume test stays).
@pytest.mark.slow
def test_time_is_counted_across_sessions_and_a_reached_target_ends_the_campaign(
    tmp_path: Path,
) -> None:
    repo = wordfreq_repo(tmp_path / "wordfreq")
    folder = tmp_path / "campaign"
    done = optimize(
        "-m", str(repo), "--no-stability-check", "--target-pct", "30", "--out", str(folder)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert exit_condition(folder) == "target-reached"
    assert [v for _, v, _ in verdicts(folder)] == ["accepted"]
    first = events(folder, "exit")[-1]
    # The heuristic proposer's frozenset is well past 30 %; the first session took seconds.
    resumed = optimize("--resume", str(folder), "--target-pct", "99", "--max-duration", "2s")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert exit_condition(folder) == "budget-time"
    assert len(verdicts(folder)) == 1
    given = events(folder, "resume")[0]["body"]["given"]
    assert given == {"target_pct": 99.0, "max_duration_s": 2.0}
    assert first["body"]["condition"] == "target-reached"
    assert "budget-time" in resumed.stdout
    options = json.loads(rows(folder, "SELECT options FROM campaigns")[0]["options"])
    assert options["model"] == "heuristic" and options["target_pct"] == 30
