"""The `speedproof judge` command as a user runs it: exit codes, JSON, ledger, Ctrl-C, sandbox."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from support.git import git
from support.toy_target import toy_manifest, toy_target

SPEEDPROOF = [sys.executable, "-m", "speedproof"]


@pytest.fixture(scope="module")
def logstat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialise(get_example("logstat"), tmp_path_factory.mktemp("cli"))


def _patch(name: str) -> Path:
    return get_example("logstat").folder / "patches" / name


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, *args], capture_output=True, text=True, timeout=600, env=env, check=False
    )


def _worktrees(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line for line in out.splitlines() if line.startswith("worktree ")]


def test_a_rejected_attack_exits_1_with_the_json_fields(logstat: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger"
    done = _run(
        "judge",
        str(_patch("attack-edit-test.patch")),
        "-m",
        str(logstat),
        "--json",
        "--ledger",
        str(ledger),
    )
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["verdict"] == "rejected"
    assert {"verdict", "reasons", "rests_on", "gates", "comparisons", "ledger_id"} <= set(answer)
    assert answer["gates"][0]["name"] == "guard"
    listed = _run("ledger", "list", "--ledger", str(ledger), "--json")
    assert json.loads(listed.stdout)[0]["status"] == "rejected"
    shown = _run("ledger", "show", str(answer["ledger_id"]), "--ledger", str(ledger), "--json")
    assert "main_test.go" in json.loads(shown.stdout)["diff"] or "_test.go" in shown.stdout


@pytest.mark.slow
def test_an_accepted_speedup_exits_0_and_names_its_workload(logstat: Path, tmp_path: Path) -> None:
    done = _run(
        "judge",
        str(_patch("speedup-hoist-regexp.patch")),
        "-m",
        str(logstat),
        "--pairs",
        "8",
        "--json",
        "--ledger",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["verdict"] == "accepted"
    assert answer["rests_on"] in {"shop-day", "api-day-slow"}
    figures = [c["figure"] for c in answer["comparisons"] if c["workload"] == answer["rests_on"]]
    # 8 pairs, or 16 once a confirmation series is pooled in.
    assert any("n=8)" in f or "n=16)" in f for f in figures), figures


def test_a_malformed_manifest_exits_3_naming_the_key_and_line(tmp_path: Path) -> None:
    manifest = tmp_path / "speedproof.toml"
    manifest.write_text('[target]\nname = "x"\nlanguage = "rust"\n[tests]\nrunner = "go"\n')
    done = _run("manifest", "validate", str(manifest))
    assert done.returncode == 3
    assert "target.language" in done.stderr and "line 3" in done.stderr


def test_without_bubblewrap_judging_stops_unless_asked_to_run_unsandboxed(
    logstat: Path, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "patch"):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    env = {**os.environ, "PATH": str(bin_dir)}
    args = [
        "judge",
        str(_patch("attack-lockfile.patch")),
        "-m",
        str(logstat),
        "--json",
        "--ledger",
        str(tmp_path / "ledger"),
    ]
    refused = _run(*args, env=env)
    assert refused.returncode == 3
    assert "bubblewrap" in refused.stderr and "--no-sandbox" in refused.stderr
    unsandboxed = _run(*args, "--no-sandbox", env=env)
    assert unsandboxed.returncode == 1
    assert json.loads(unsandboxed.stdout)["sandbox"] == "none"
    with sqlite3.connect(tmp_path / "ledger" / "ledger.sqlite") as db:
        assert db.execute("SELECT sandbox FROM candidates").fetchall() == [("none",)]


def test_ctrl_c_mid_measurement_leaves_no_worktree_and_records_the_interruption(
    logstat: Path, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    proc = subprocess.Popen(
        [
            *SPEEDPROOF,
            "judge",
            str(_patch("noop-comment.patch")),
            "-m",
            str(logstat),
            "--pairs",
            "400",
            "--ledger",
            str(ledger),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # A test run started in the background by a non-interactive shell inherits SIGINT
        # ignored, and so would the judge: give it the default, as a terminal's Ctrl-C has.
        preexec_fn=_default_sigint,
    )
    database = ledger / "ledger.sqlite"
    for _ in range(1200):
        if database.exists() and _samples(database) > 0:
            break
        time.sleep(0.1)
    assert len(_worktrees(logstat)) == 3, "judging never got to measuring"
    proc.send_signal(signal.SIGINT)
    # communicate, not wait: the child's stderr is a pipe, and a child blocked on a full pipe
    # would never get to exit.
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err.decode(errors="replace")[-2000:]
    assert len(_worktrees(logstat)) == 1
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT error FROM verdicts").fetchall() == [("interrupted",)]
        assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] > 0


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _samples(database: Path) -> int:
    try:
        with sqlite3.connect(database) as db:
            return int(db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


SHUFFLED_TOOL = """\
import random

# Twelve lines in a fresh order every run: two runs agree on the order once in 479 million.
lines = [f"word {n}" for n in range(12)]
random.SystemRandom().shuffle(lines)
print("\\n".join(lines))
"""
SHUFFLED_MANIFEST = toy_manifest(
    name="shuffled", language="python", instructions=False, policy="pairs = 4"
)
SHUFFLED_NOOP = """\
diff --git a/tool.py b/tool.py
--- a/tool.py
+++ b/tool.py
@@ -4,3 +4,4 @@ import random
 lines = [f"word {n}" for n in range(12)]
 random.SystemRandom().shuffle(lines)
 print("\\n".join(lines))
+# Prints every word once.
"""


def test_a_workload_compared_as_sorted_lines_says_so_in_the_json_notes(tmp_path: Path) -> None:
    repo = toy_target(tmp_path / "shuffled", SHUFFLED_MANIFEST, {"tool.py": SHUFFLED_TOOL})
    patch = tmp_path / "noop.patch"
    patch.write_text(SHUFFLED_NOOP)
    done = _run("judge", str(patch), "-m", str(repo), "--json", "--ledger", str(tmp_path / "l"))
    assert done.returncode in (0, 1, 2), done.stderr
    answer = json.loads(done.stdout)
    # Not a reason: the order of lines decided nothing, it only changed what was compared.
    assert not any("sorted" in reason for reason in answer["reasons"]), answer["reasons"]
    (note,) = [n for n in answer["notes"] if "sorted" in n]
    assert note.startswith(
        "workload w: the baseline's output differs between two runs of itself (stdout differs"
    )
    assert note.endswith("but not once its lines are sorted, so it is compared as sorted lines.")
