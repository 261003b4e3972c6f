"""A function-mode batch that loses a node in its middle finishes without being run again: the
rows the lost node held are verified on a live node, and every row is written once.

The batch runs as a user would run it (`speedproof fn verify --batch … --cluster ray`), in a
process of its own, on a loopback Ray cluster of the test's own (`support.own_ray`), since the
test kills one of its nodes as a machine is lost: its raylet and every worker at once."""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from speedproof.corpus.jsonl import read_rows
from support.campaign import SPEEDPROOF
from support.cluster import CHEAP_STATUSES, cheap_rows, write_jsonl
from support.own_ray import own_ray

# Copies of the cheap rows (each a few sandboxed runs): enough that the batch is still running
# on both nodes when the first rows are written.
COPIES = 6


def _rows() -> tuple[list[dict[str, object]], dict[str, str]]:
    rows, expected = [], {}
    for copy in range(COPIES):
        for row in cheap_rows(seed=4 + copy):
            ident = f"{row['id']}-{copy}"
            rows.append({**row, "id": ident})
            expected[ident] = CHEAP_STATUSES[str(row["id"])]
    return rows, expected


def _written(out: Path) -> list[dict[str, object]]:
    try:
        return read_rows(out)
    except (OSError, ValueError):  # not written yet, or a row half written
        return []


@pytest.mark.slow
def test_a_node_lost_in_the_middle_of_a_batch_has_its_rows_verified_on_a_live_node(
    tmp_path: Path,
) -> None:
    rows, expected = _rows()
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "out.jsonl"
    with own_ray(2, tmp_path / "caches") as ray:
        # One machine: the driver must reach the loopback nodes on 127.0.0.1, as they were made.
        env = {**os.environ, "RAY_ADDRESS": ray.address, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        command = [*SPEEDPROOF, "fn", "verify", "--batch", str(source), "--out", str(out)]
        proc = subprocess.Popen(
            [*command, "--cluster", "ray", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for _ in range(3000):  # the first rows written: both nodes are verifying
            if proc.poll() is not None or len(_written(out)) >= 2:
                break
            time.sleep(0.05)
        if proc.poll() is not None:
            raise AssertionError(f"the batch ended before a node was lost: {proc.communicate()}")
        before = len(_written(out))
        ray.kill_node("extra")
        stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    written = _written(out)
    assert before < len(rows)  # the node was lost with rows still to verify
    assert Counter(str(row["id"]) for row in written) == Counter(expected.keys())  # each once
    assert {str(row["id"]): row["status"] for row in written} == expected  # none lost to it
    assert "infrastructure" not in stdout
    assert "failed on node" in stderr and "running it on node" in stderr  # the lost node's jobs
