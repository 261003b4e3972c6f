"""`speedproof optimize --cluster`: waves of candidates judged in parallel, one per measuring
node, each within its node; several accepts of one wave linked one at a time; a driver killed
mid-wave resumed with nothing lost or duplicated.

The toy target (`cluster_toy`) gives the heuristic proposer two independent wins against the
base. The two-node campaign runs on the session's loopback Ray cluster (`conftest`), whose nodes
tell the toy their names, so each sample's stdout digest says which node measured it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import NODE_NAMES
from speedproof.campaign.state import CampaignState, load_state
from speedproof.cli import app
from speedproof.cluster import Cluster, Placement, open_cluster
from speedproof.judge.policy.evidence import Comparison, PolicyRules
from speedproof.ledger import Ledger
from support.campaign import SPEEDPROOF, events, rows
from support.cluster_toy import node_name, output_digest, toy_repo

CAMPAIGN = "20250101-000000-c1c1c1"


# ----- the records a wave leaves, read back -------------------------------------------------


def _reading(delta: float) -> Comparison:
    return Comparison(
        workload="count",
        metric="wall",
        tier="representative",
        n_baseline=6,
        n_candidate=6,
        baseline_mean=1.0,
        candidate_mean=1.0 + delta / 100,
        delta_pct=delta,
        ci_low_pct=delta - 1,
        ci_high_pct=delta + 1,
        p_value=0.01,
        welch_t=None,
        p_welch=None,
        p_mannwhitney=None,
        significant=True,
        supported=True,
    )


def _landed(ledger: Ledger, verdict: str, delta: float, dispatch: int, **told: Any) -> int:
    """A candidate as a wave lands it: against the base, with its dispatch and node."""
    cid = ledger.start_candidate(
        origin="campaign",
        campaign=CAMPAIGN,
        target="toy",
        repo=Path("/r"),
        base_rev="b0",
        patch_sha256=f"sha{dispatch}",
        diff=f"diff {dispatch}",
        sandbox="bwrap",
        facts={"node": {"id": f"node-{dispatch}"}},
    )
    event = {"function": f"f{dispatch}", "hypothesis": "h", "rule": "r", "invalid": False}
    body = {**event, "dispatch": dispatch, **told}
    ledger.add_event(CAMPAIGN, "candidate", body, candidate_id=cid)
    ledger.add_comparisons(cid, [_reading(delta)])
    ledger.finish(cid, verdict=verdict, reasons=[], rests_on="count", lane="timed", timings={})
    return cid


def _state(ledger: Ledger) -> CampaignState:
    return load_state(ledger, CAMPAIGN, PolicyRules(), now=datetime.now(UTC))


def test_of_a_waves_accepts_the_largest_gain_is_linked_and_the_others_never_are(
    tmp_path: Path,
) -> None:
    ledger = Ledger.in_folder(tmp_path)
    ledger.start_campaign(CAMPAIGN, target="toy", repo=tmp_path, base_rev="b0", options={})
    ledger.add_event(CAMPAIGN, "start", {})
    dispatched = [
        ledger.add_event(CAMPAIGN, "dispatched", {"parent": "b0", "diff": f"d{i}", "records": {}})
        for i in range(4)
    ]
    small = _landed(ledger, "accepted", -12.0, dispatched[0])
    large = _landed(ledger, "accepted", -31.0, dispatched[1])
    _landed(ledger, "inconclusive", -2.0, dispatched[2])
    # The fourth job never came back: the driver stopped.
    waiting = _state(ledger)
    assert [a.candidate_id for a in waiting.unlinked_accepts()] == [small, large]
    assert waiting.pending_accept() is not None
    assert waiting.pending_accept().candidate_id == large  # type: ignore[union-attr]
    assert [number for number, _ in waiting.orphans()] == [dispatched[3]]
    # What the wave writes next: the others passed over, then the link. Stopped in between, a
    # resume still links the same candidate, and only it.
    note = {"what": "passed-over", "candidate": small, "linked": large, "parent": "b0"}
    ledger.add_event(CAMPAIGN, "note", note)
    between = _state(ledger)
    assert [a.candidate_id for a in between.unlinked_accepts()] == [large]
    assert between.pending_accept().candidate_id == large  # type: ignore[union-attr]
    link = {"commit": "c1", "parent": "b0", "index": 1}
    ledger.add_event(CAMPAIGN, "accepted", link, candidate_id=large)
    linked = _state(ledger)
    assert linked.head == "c1" and linked.pending_accept() is None
    assert [a.candidate_id for a in linked.carries()] == [small]  # judged again on c1 next
    # Once the passed-over accept is being judged again on c1, it is not carried twice.
    records = {"event": {"carried_from": small, "function": "f0"}}
    ledger.add_event(CAMPAIGN, "dispatched", {"parent": "c1", "diff": "d0", "records": records})
    assert _state(ledger).carries() == []
    ledger.close()


# ----- a driver killed mid-wave --------------------------------------------------------------


def _wait_for(folder: Path, proc: subprocess.Popen[str], kind: str) -> None:
    for _ in range(6000):
        if proc.poll() is not None:
            raise AssertionError(f"the campaign ended first: {proc.communicate()}")
        try:
            if (folder / "ledger.sqlite").exists() and events(folder, kind):
                return
        except Exception:  # the ledger's tables are still being made
            pass
        time.sleep(0.05)
    raise AssertionError(f"no {kind} event appeared")


# 10 s; a killed local campaign's resume stays in `make test` (tests/campaign/).
@pytest.mark.slow
def test_a_cluster_campaign_killed_mid_wave_resumes_with_nothing_lost_or_duplicated(
    tmp_path: Path,
) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    proc = subprocess.Popen(
        [
            *SPEEDPROOF,
            "optimize",
            "-m",
            str(repo),
            "--cluster",
            "local",
            "--no-stability-check",
            "--max-candidates",
            "1",
            "--out",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _wait_for(folder, proc, "dispatched")
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its worker, mid-judgement
    proc.communicate(timeout=60)
    (sent,) = events(folder, "dispatched")
    held_calls = sent["body"]["records"]["calls"]
    assert rows(folder, "SELECT id FROM candidates") == []  # nothing landed before the result
    assert rows(folder, "SELECT id FROM role_calls") == []  # held with the dispatch
    assert [c["role"] for c in held_calls] == ["coordinator", "analyst", "optimizer", "reviewer"]

    done = subprocess.run(
        [*SPEEDPROOF, "optimize", "--resume", str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (candidate,) = rows(folder, "SELECT id, diff, facts FROM candidates")
    assert candidate["diff"] == sent["body"]["diff"]
    assert json.loads(candidate["facts"])["node"]["id"] == "local"
    (told,) = events(folder, "candidate")
    assert told["body"]["dispatch"] == sent["id"] and told["candidate_id"] == candidate["id"]
    assert len(events(folder, "dispatched")) == 1  # judged again under the same dispatch
    calls = rows(folder, "SELECT role, candidate_id FROM role_calls ORDER BY id")
    assert [(c["role"], c["candidate_id"]) for c in calls] == [
        (c["role"], candidate["id"]) for c in held_calls
    ]  # the proposal's calls, once, on its candidate: no new model call
    assert events(folder, "exit")[-1]["body"]["condition"] == "budget-candidates"


# ----- two nodes ------------------------------------------------------------------------------


def node_names(cluster: Cluster) -> dict[str, str]:
    """Each node's id -> the name the test cluster gave it (SPEEDPROOF_TEST_NODE)."""
    with cluster.batch(node_name) as batch:
        jobs = {batch.submit(None, Placement(node=n.id)): n.id for n in cluster.nodes()}
        return {jobs[f.job]: str(f.value) for f in (batch.next_finished() for _ in jobs)}


@pytest.mark.slow
def test_a_two_node_campaign_judges_each_wave_in_parallel_and_each_candidate_within_one_node(
    ray_address: str, tmp_path: Path
) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    result = CliRunner().invoke(
        app,
        [
            "optimize",
            "-m",
            str(repo),
            "--cluster",
            "ray",
            "--no-stability-check",
            "--max-candidates",
            "3",
            "--out",
            str(folder),
        ],
    )
    assert result.exit_code == 0, result.output
    with open_cluster("ray") as cluster:
        names = node_names(cluster)
    assert sorted(names.values()) == sorted(NODE_NAMES)
    digests = {output_digest(repo, name): name for name in NODE_NAMES}
    judged = rows(
        folder,
        "SELECT c.id, c.base_rev, c.facts, v.verdict FROM candidates c"
        " JOIN verdicts v ON v.candidate_id = c.id ORDER BY c.id",
    )
    assert len(judged) == 3
    for row in judged:
        node = json.loads(row["facts"])["node"]
        assert node["id"] in names and node["hostname"] == socket.gethostname()
        assert node["environment"]["cpu_model"]
        measured = rows(
            folder,
            "SELECT stdout_sha256 FROM samples WHERE candidate_id = ? AND workload = 'count'",
            (row["id"],),
        )
        # Every timed run of the candidate, both sides, printed the name of its node.
        assert measured and {digests[s["stdout_sha256"]] for s in measured} == {names[node["id"]]}
    # The first wave: two proposals against the base, at once, one on each node.
    base = events(folder, "start")[0]["body"]["base_rev"]
    first = [row for row in judged if row["base_rev"] == base]
    assert len(first) == 2
    assert {json.loads(row["facts"])["node"]["id"] for row in first} == set(names)
    told = {e["candidate_id"]: e["body"] for e in events(folder, "candidate")}
    assert Counter(b["dispatch"] for b in told.values()).most_common(1)[0][1] == 1
    assert {e["id"] for e in events(folder, "dispatched")} == {b["dispatch"] for b in told.values()}
    # One link per parent; an accept left out was passed over, then judged again on the new one.
    linked = [e["body"]["parent"] for e in events(folder, "accepted")]
    assert len(linked) == len(set(linked))
    passed = [e["body"] for e in events(folder, "note") if e["body"]["what"] == "passed-over"]
    accepted_first = [row["id"] for row in first if row["verdict"] == "accepted"]
    assert len(passed) == max(0, len(accepted_first) - 1)
    for note in passed:
        again = [cid for cid, body in told.items() if body.get("carried_from") == note["candidate"]]
        assert len(again) == 1
