"""A parent's bundle is shipped to a node once and kept there by its digest; a cached copy that
is missing or damaged is never unpacked, and the driver sends the bytes again."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.campaign.flight import Flight
from speedproof.campaign.records import Held
from speedproof.campaign.waves import Dispatch
from speedproof.cluster import LocalCluster
from speedproof.cluster.bundle_cache import BundleMissing, Shipments, cached, digest_of, store
from speedproof.cluster.jobs import LOCAL_NODE
from speedproof.cluster.judging import Shipper, judge_on_node
from speedproof.cluster.shipping import bundle_revision
from speedproof.ground.errors import InfrastructureError
from speedproof.judge.evaluate import JudgeOptions
from speedproof.judge.worktree.trees import resolve_rev
from speedproof.manifest_loading import load_manifest
from support.campaign import SPEEDPROOF, rows
from support.cluster_toy import sets_patch, toy_repo


def test_a_stored_bundle_is_found_by_its_revision_and_digest(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    rev = resolve_rev(repo, "HEAD")
    bundle = bundle_revision(repo, rev)
    store(bundle, rev, digest_of(bundle), tmp_path / "cache")
    assert cached(rev, digest_of(bundle), tmp_path / "cache").read_bytes() == bundle


def test_bytes_that_do_not_hash_to_the_digest_sent_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match="damaged in transit"):
        store(b"not the bundle", "r" * 40, digest_of(b"the bundle"), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_cached_bundle_is_removed_and_named_missing(tmp_path: Path) -> None:
    digest = digest_of(b"the bundle")
    path = store(b"the bundle", "r" * 40, digest, tmp_path)
    path.write_bytes(b"the bundle, edited")
    with pytest.raises(BundleMissing, match="hashes to"):
        cached("r" * 40, digest, tmp_path)
    assert not path.exists()
    with pytest.raises(BundleMissing, match="no cached bundle"):
        cached("r" * 40, digest, tmp_path)


def test_a_job_without_the_bytes_on_a_node_without_them_fails_as_bundle_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPEEDPROOF_BUNDLE_CACHE", str(tmp_path / "empty"))
    repo = toy_repo(tmp_path / "toy")
    job = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False).job(
        "", JudgeOptions(base="HEAD")
    )
    with pytest.raises(BundleMissing):
        judge_on_node(replace(job, bundle=None))


# 14 s, a whole campaign; the cache's rules are tested above and below in a second or less.
@pytest.mark.slow
def test_a_local_campaign_ships_each_parents_bundle_to_its_node_once(tmp_path: Path) -> None:
    repo = toy_repo(tmp_path / "toy")
    folder = tmp_path / "campaign"
    cache = tmp_path / "node-cache"
    done = subprocess.run(
        [
            *SPEEDPROOF,
            "optimize",
            "-m",
            str(repo),
            "--cluster",
            "local",
            "--no-stability-check",
            "--max-candidates",
            "2",
            "--out",
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SPEEDPROOF_BUNDLE_CACHE": str(cache)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    judged = rows(folder, "SELECT base_rev FROM candidates")
    parents = {row["base_rev"] for row in judged}
    assert len(judged) == 2
    shipped = [line for line in done.stderr.splitlines() if "shipping the bundle" in line]
    # One node: one shipment per parent, however many candidates were judged against it.
    assert len(shipped) == len(parents), done.stderr
    assert sorted(p.name.split("-")[0] for p in cache.glob("*.bundle")) == sorted(parents)


def test_a_node_whose_cached_bundle_is_gone_is_sent_the_bytes_again_and_judges_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPEEDPROOF_BUNDLE_CACHE", str(tmp_path / "wiped"))
    repo = toy_repo(tmp_path / "toy")
    shipper = Shipper(load_manifest(repo / "speedproof.toml"), unsandboxed=False)
    job = shipper.job(sets_patch(repo), JudgeOptions(base="HEAD"))
    # The driver believes the node has the bundle; the node's folder is empty (wiped, say).
    shipments = Shipments()
    shipments.shipped(LOCAL_NODE, job.bundle_digest, 0)
    said: list[str] = []
    with LocalCluster(workers=1) as cluster, cluster.batch(judge_on_node) as batch:
        flight: Flight[Dispatch] = Flight(batch, cluster, cluster.nodes(), shipments, said.append)
        flight.send(Dispatch(1, job.patch, Held()), job)
        results = list(flight.results())
    (outcome,) = results
    assert outcome[2].ok and outcome[2].value is not None and outcome[2].value.verdict
    assert [line for line in said if "shipping the bundle" in line] != []
    assert len(list((tmp_path / "wiped").glob("*.bundle"))) == 1
