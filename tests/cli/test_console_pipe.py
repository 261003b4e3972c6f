"""A report read through a pipe or a file keeps every table cell whole.

The real command line in a subprocess, its stdout a pipe and its stdin not a terminal (so rich
cannot borrow a terminal's width from it), no COLUMNS: what `speedproof ... | grep` and a CI log
see. A real ledger in tmp_path holds what is listed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from speedproof.ledger import Ledger

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
# Longer than rich's 80 columns leave the "rests on" column when it must share them.
LONG_WORKLOAD = "access-log-forty-thousand-lines-from-the-production-edge-proxy"


def _piped(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [*SPEEDPROOF, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _ledger_with_one_verdict(folder: Path) -> None:
    with Ledger.in_folder(folder) as ledger:
        candidate = ledger.start_candidate(
            origin="proposer:heuristic/hoist-regexp-compile",
            target="logstat-with-a-long-name",
            repo=Path("/repo"),
            base_rev="a" * 40,
            patch_sha256="b" * 64,
            diff="--- a/x\n+++ b/x\n",
            sandbox="bwrap",
            facts={},
        )
        ledger.finish(
            candidate,
            verdict="accepted",
            reasons=["faster"],
            rests_on=LONG_WORKLOAD,
            lane="timed",
            timings={},
        )


def test_the_ledger_list_read_through_a_pipe_keeps_its_headers_and_a_long_workload_id_whole(
    tmp_path: Path,
) -> None:
    _ledger_with_one_verdict(tmp_path / "ledger")

    done = _piped("ledger", "list", "--ledger", str(tmp_path / "ledger"))

    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout, done.stdout
    header = done.stdout.splitlines()[1]
    assert "rests on" in header and "sandbox" in header, done.stdout
    assert LONG_WORKLOAD in done.stdout, done.stdout
    assert "proposer:heuristic/hoist-regexp-compile" in done.stdout, done.stdout
