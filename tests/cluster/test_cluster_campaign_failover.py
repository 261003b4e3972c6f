"""A cluster campaign that loses a node mid-wave goes on without `--resume`: the lost node's
candidate is judged on a live node and lands once, and each node gets a parent's bundle once.

These run on a loopback Ray cluster of their own (`support.own_ray`), since they kill one of its
nodes; the campaign's driver is a process of its own too, as a user's would be."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from support.campaign import SPEEDPROOF, events, rows
from support.cluster_toy import toy_repo
from support.own_ray import OwnRay, own_ray


def _campaign(ray: OwnRay, repo: Path, folder: Path, candidates: int) -> subprocess.Popen[str]:
    env = {**os.environ, "RAY_ADDRESS": ray.address, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    command = [
        *SPEEDPROOF,
        "optimize",
        "-m",
        str(repo),
        "--cluster",
        "ray",
        "--no-stability-check",
        "--max-candidates",
        str(candidates),
        "--out",
        str(folder),
    ]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _wait_for_dispatches(folder: Path, proc: subprocess.Popen[str], count: int) -> None:
    for _ in range(6000):
        if proc.poll() is not None:
            raise AssertionError(f"the campaign ended first: {proc.communicate()}")
        try:
            if len(events(folder, "dispatched")) >= count:
                return
        except Exception:  # the ledger's tables are still being made
            pass
        time.sleep(0.05)
    raise AssertionError(f"{count} dispatched events never appeared")


def _landed_once(folder: Path) -> list[dict[str, object]]:
    """Every dispatched proposal landed as exactly one candidate; returns the candidate rows."""
    sent = [e["id"] for e in events(folder, "dispatched")]
    told = Counter(e["body"]["dispatch"] for e in events(folder, "candidate"))
    assert sorted(told) == sorted(sent) and set(told.values()) == {1}, (sent, told)
    found = rows(folder, "SELECT id, facts FROM candidates ORDER BY id")
    assert len(found) == len(sent)
    return found


@pytest.mark.slow
def test_a_node_lost_mid_wave_has_its_candidate_judged_on_a_live_node_without_resume(
    tmp_path: Path,
) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    with own_ray(2, tmp_path / "caches") as ray:
        proc = _campaign(ray, repo, folder, candidates=2)
        _wait_for_dispatches(folder, proc, 2)  # one job on each node
        ray.kill_node("extra")
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    judged = _landed_once(folder)
    assert len(judged) == 2
    # The node that was lost judged nothing: both candidates were judged on the head.
    assert len({json.loads(str(row["facts"]))["node"]["id"] for row in judged}) == 1
    assert "lost: candidate" in err  # the log says which candidate moved
    assert events(folder, "exit")[-1]["body"]["condition"] == "budget-candidates"
    # The head judged two candidates of one parent and was sent its bundle once; the job that
    # moved there came without the bytes and used the head's cached copy.
    (head,) = {json.loads(str(row["facts"]))["node"]["id"][:12] for row in judged}
    assert Counter(_shipped(err))[head] == 1 and len(_shipped(err)) == 2, err
    assert len(list(ray.caches["head"].glob("*.bundle"))) == 1


def _shipped(log: str) -> list[str]:
    """The nodes the campaign's log says a bundle was shipped to, one entry a shipment."""
    return [line.rsplit(" ", 1)[-1] for line in log.splitlines() if "shipping the bundle" in line]
