"""`speedproof verify --cluster SPEC --elsewhere`: each accepted candidate re-measured on another
node than the one that accepted it, held or not held, with both machines' facts, recorded in
the ledger; and the refusals when that cannot be done honestly.

The not-held case is made the way it happens between real machines: the session's Ray cluster
(`conftest`) gives TOY_ACCEL=1 to its extra node only, and `cluster_toy.accel_patch` is faster
only where that is set (standing in for an optional native module or a CPU feature). Accepted
on the extra node, it is re-measured on the head, where it does nothing. Both nodes share this
machine, so neither re-measurement counts as elsewhere (another host), and the results say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from speedproof.cli import app
from speedproof.cluster import Cluster, Placement, measuring_on, open_cluster
from speedproof.cluster.judging import Shipper, judge_on_node
from speedproof.judge.evaluate import JudgeOptions
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.cluster_toy import accel_patch, node_name, sets_patch, toy_repo


def _verify(repo: Path, ledger: Path, *extra: str) -> tuple[int, Any]:
    result = CliRunner().invoke(
        app,
        ["verify", "-m", str(repo / "speedproof.toml"), "--ledger", str(ledger), "--json", *extra],
    )
    return result.exit_code, json.loads(result.stdout)


def _accepted(ledger: Path, repo: Path, node: dict[str, Any] | None) -> int:
    """An accepted candidate as the ledger records it, judged on `node` (None: not on a
    cluster)."""
    with Ledger.in_folder(ledger) as book:
        cid = book.start_candidate(
            origin="judge",
            target="toy",
            repo=repo,
            base_rev="HEAD",
            patch_sha256="",
            diff=sets_patch(repo),
            sandbox="bwrap",
            facts={} if node is None else {"node": node},
        )
        book.finish(cid, verdict="accepted", reasons=[], rests_on=None, lane=None, timings={})
    return cid


def test_elsewhere_and_cluster_go_together(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    _accepted(tmp_path / "ledger", repo, {"id": "local"})
    code, said = _verify(repo, tmp_path / "ledger", "--elsewhere")
    assert code == 3
    assert said["message"] == "--elsewhere needs --cluster (the nodes to re-measure on)"
    code, said = _verify(repo, tmp_path / "ledger", "--cluster", "local")
    assert code == 3 and "--cluster is for --elsewhere" in said["message"]


def test_a_cluster_with_no_other_node_is_refused_by_name_never_used_twice(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    cid = _accepted(tmp_path / "ledger", repo, {"id": "local"})
    code, said = _verify(repo, tmp_path / "ledger", "--cluster", "local", "--elsewhere")
    assert code == 3 and said["kind"] == "NoOtherNode"
    assert said["message"].startswith("no other node offers a measurement slot")
    assert f"only the one that accepted candidate {cid}" in said["message"]
    with Ledger.in_folder(tmp_path / "ledger") as book:
        assert len(book.query("SELECT id FROM candidates")) == 1  # nothing was re-measured


def test_a_candidate_judged_without_a_cluster_cannot_be_verified_elsewhere(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    cid = _accepted(tmp_path / "ledger", repo, None)
    code, said = _verify(repo, tmp_path / "ledger", "--cluster", "local", "--elsewhere")
    assert code == 3
    assert said["message"].startswith(f"candidate(s) {cid} have no node facts")


def _names(cluster: Cluster) -> dict[str, str]:
    with cluster.batch(node_name) as batch:
        jobs = {batch.submit(None, Placement(node=n.id)): n.id for n in cluster.nodes()}
        return {str(f.value): jobs[f.job] for f in (batch.next_finished() for _ in jobs)}


@pytest.mark.slow
def test_a_win_accepted_on_one_node_is_reported_held_or_not_held_on_another(
    ray_address: str, tmp_path: Path
) -> None:
    repo = toy_repo(tmp_path / "toy")
    ledger = tmp_path / "ledger"
    shipper = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False)
    with open_cluster("ray") as cluster:
        ids = _names(cluster)  # name -> node id
        nodes = {node.id: node for node in cluster.nodes()}
        plan = {"sets": (sets_patch(repo), "head"), "accel": (accel_patch(repo), "extra")}
        with cluster.batch(judge_on_node) as batch, Ledger.in_folder(ledger) as book:
            jobs = {
                batch.submit(
                    shipper.job(patch, JudgeOptions(base="HEAD", origin="judge")),
                    measuring_on(nodes[ids[where]]),
                ): name
                for name, (patch, where) in plan.items()
            }
            judged = {jobs[f.job]: f.value for f in (batch.next_finished() for _ in jobs)}
            landed = {name: shipper.land(value, book) for name, value in judged.items() if value}
    assert {name: j.verdict for name, j in judged.items() if j} == {
        "sets": "accepted",
        "accel": "accepted",
    }

    # One at a time: the loopback nodes share this machine's CPUs, and a timed job beside
    # another one's alternating baseline and candidate runs reads a bias (an unchanged program
    # once read -10 %, p = 0.02). Real nodes are separate machines.
    elsewhere = ("--cluster", "ray", "--elsewhere", "--pairs", "8", "--candidate")
    code, (accel,) = _verify(repo, ledger, *elsewhere, str(landed["accel"]))
    assert code == 1  # it no longer holds
    code, (sets,) = _verify(repo, ledger, *elsewhere, str(landed["sets"]))
    # It holds, on another node of the same machine: that is not elsewhere, and it is said so.
    assert code == 1
    assert (sets["mode"], sets["holds"], sets["verdict"]) == ("elsewhere", True, "accepted")
    assert sets["elsewhere"] is False and accel["elsewhere"] is False
    assert sets["accepted_on"]["host"]["key"] == sets["measured_on"]["host"]["key"]
    assert accel["holds"] is False and accel["verdict"] in ("inconclusive", "rejected")
    assert (sets["accepted_on"]["id"], sets["measured_on"]["id"]) == (ids["head"], ids["extra"])
    assert (accel["accepted_on"]["id"], accel["measured_on"]["id"]) == (ids["extra"], ids["head"])
    for check in (sets, accel):
        for facts in (check["accepted_on"], check["measured_on"]):
            assert facts["hostname"] and facts["environment"]["cpu_model"]
    with Ledger.in_folder(ledger) as book:
        flags = {e["candidate_id"]: e for e in book.events(None) if e["kind"] != "calibration"}
        again = {c["id"]: book.show(c["id"]) for c in book.query("SELECT id FROM candidates")}
    assert flags[landed["sets"]]["kind"] == "verified"
    assert flags[landed["accel"]]["kind"] == "no-longer-holds"
    assert flags[landed["accel"]]["body"]["measured_on"]["id"] == ids["head"]
    remeasured = again[accel["ledger_id"]]
    assert remeasured["origin"] == "verify" and remeasured["facts"]["node"]["id"] == ids["head"]
