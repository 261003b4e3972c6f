"""Judging one candidate on a node of a cluster, and landing the judgement in the driver's ledger.

The driver makes a `JudgeJob` (`Shipper.job`): the manifest (its text and its path in the
repository), the base revision as a git bundle, the patch and the judge's options, everything a
node needs without sharing the driver's filesystem; a holdout folder, when the manifest or the
command names one, travels with it. The node (`judge_on_node`) unpacks the bundle into a folder
of the job's own, runs the real `Judge` there against a `RecordingLedger`, and returns the
recorded writes, the verdict and the node's facts. The driver replays the writes into its ledger
in one transaction (`Shipper.land`), the node's facts going into the candidate row's facts as
`node`: {"id", "hostname", "environment"}. Baseline and candidate are built, tested and measured
on that one node, in pairs, as always: no timing is ever compared across machines.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import speedproof
from speedproof.cluster import bundle_cache
from speedproof.cluster.errors import ClusterError
from speedproof.cluster.jobs import LOCAL_NODE, Cluster, NodeInfo, current_node, describe
from speedproof.cluster.node_probe import find_tool, host_facts, installed_version
from speedproof.cluster.recording import Call, RecordingLedger, replay
from speedproof.cluster.shipping import (
    bundle_revision,
    job_folder,
    pack_folder,
    unpack_bundle_file,
    unpack_folder,
    unpack_revision,
)
from speedproof.ground.errors import InfrastructureError, SpeedproofError
from speedproof.ground.git import repository_root
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.inputs.unseen import holdout_source
from speedproof.judge.measure.environment import describe_environment
from speedproof.judge.worktree.trees import resolve_rev
from speedproof.ledger import Ledger
from speedproof.manifest_loading import LoadedManifest, load_manifest


@dataclass(frozen=True)
class JudgeJob:
    """One candidate to judge on a node. `options` leave out what is the node's own (the
    repository, the caches, the holdout folder)."""

    manifest_text: str
    # The manifest's path relative to the repository's top.
    manifest_path: str
    # The base revision's bundle; None when the node already has it cached (`bundle_cache`).
    bundle: bytes | None
    base_rev: str
    patch: str
    options: JudgeOptions
    unsandboxed: bool = False
    # The holdout folder's files (relative path -> content), when there is one.
    holdout: dict[str, bytes] | None = None
    # The sha256 of the bundle's bytes: the name it is cached under on the node.
    bundle_digest: str = ""


@dataclass(frozen=True)
class Judged:
    """What a node sends back: the judge's writes in order, the verdict (None when the judge
    raised: `error` says why, and the writes end with the candidate's error row), where it ran."""

    calls: tuple[Call, ...]
    verdict: str | None
    reasons: tuple[str, ...]
    node: dict[str, Any]
    error: str | None = None
    # The workload the verdict rests on, and its reading in words.
    rests_on: str | None = None
    figure: str = ""


def node_facts(go: str | None = None) -> dict[str, Any]:
    """The node a job runs on: its cluster id, its host (name and key), the speedproof and Ray
    it runs, and its machine's facts, with `cores` the CPUs the node offers (a node may be given
    fewer than its machine has) and Go's version when `go` is the target's toolchain."""
    node = current_node() or LOCAL_NODE
    described = describe_environment(go=go)
    environment = {**described.as_dict(), "cores": node_cpus(node, described.cores)}
    return {
        "id": node,
        "hostname": socket.gethostname(),
        "host": host_facts(),
        "speedproof": speedproof.__version__,
        "ray": installed_version("ray"),
        "environment": environment,
    }


def node_cpus(node: str, machine: int) -> int | float:
    """The CPUs a Ray node offers (its `CPU` resource, whole when it is whole); `machine`
    outside Ray."""
    if node == LOCAL_NODE:
        return machine
    from speedproof.cluster.ray_cluster import node_resources

    cpus = float(node_resources(node).get("CPU", machine))
    return int(cpus) if cpus.is_integer() else cpus


def target_go(loaded: LoadedManifest) -> str | None:
    """The `go` a Go target builds with on this node, for its version in the facts."""
    return find_tool("go") if loaded.manifest.target.language == "go" else None


def judge_on_node(job: JudgeJob) -> Judged:
    """The task: judge `job` here, in a folder of its own, removed however the job ends."""
    book = RecordingLedger()
    with job_folder() as folder:
        repo = _unpacked(job, folder / "repo")
        manifest = repo / job.manifest_path
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(job.manifest_text, encoding="utf-8")
        holdout = None if job.holdout is None else unpack_folder(job.holdout, folder / "holdout")
        loaded = load_manifest(manifest)
        node = node_facts(go=target_go(loaded))
        judge = Judge(
            loaded,
            sandbox=make_sandbox(allow_unsandboxed=job.unsandboxed),
            ledger=book,
            options=replace(job.options, repo=repo, cache_dir=None, holdout_dir=holdout),
        )
        try:
            outcome = judge.judge(job.patch)
        except SpeedproofError as exc:
            if not book.calls:
                raise  # nothing was recorded: the job's own error
            return Judged(tuple(book.calls), None, (), node, describe(exc))
    verdict = outcome.verdict
    figure = next((c.render() for c in outcome.comparisons if c.workload == verdict.rests_on), "")
    return Judged(
        tuple(book.calls),
        verdict.verdict,
        tuple(verdict.reasons),
        node,
        rests_on=verdict.rests_on,
        figure=figure,
    )


def _unpacked(job: JudgeJob, into: Path) -> Path:
    """The job's base revision checked out at `into`, from its bytes or the node's cache."""
    if not job.bundle_digest:
        if job.bundle is None:
            raise InfrastructureError("a job came with neither a bundle nor a bundle's digest")
        return unpack_revision(job.bundle, job.base_rev, into)
    if job.bundle is not None:
        bundle_cache.store(job.bundle, job.base_rev, job.bundle_digest)
    return unpack_bundle_file(
        bundle_cache.cached(job.base_rev, job.bundle_digest), job.base_rev, into
    )


def measuring_nodes(cluster: Cluster) -> list[NodeInfo]:
    """The nodes that offer a measurement slot; a ClusterError when none does."""
    nodes = [node for node in cluster.nodes() if node.slots > 0]
    if not nodes:
        raise ClusterError(
            "no node of the cluster offers a measurement slot: start each node with "
            "`ray start … --resources '{\"speedproof_slot\": 1}'`"
        )
    return nodes


class Shipper:
    """Makes the jobs that judge one target's candidates on nodes, and lands what comes back.
    Each base revision is bundled once."""

    def __init__(
        self, loaded: LoadedManifest, *, unsandboxed: bool, holdout_dir: Path | None = None
    ) -> None:
        self.loaded = loaded
        self.repo = repository_root(loaded.root.resolve())
        try:
            self.manifest_path = str(loaded.path.resolve().relative_to(self.repo))
        except ValueError as exc:
            raise ClusterError(
                f"the manifest {loaded.path} lies outside its repository {self.repo}; a node "
                "receives the repository and the manifest's place in it"
            ) from exc
        source = holdout_source(loaded, holdout_dir)
        self.holdout = pack_folder(source) if source is not None and source.is_dir() else None
        self.unsandboxed = unsandboxed
        # Each base revision's bundle and its sha256, made once.
        self._bundles: dict[str, tuple[bytes, str]] = {}

    def job(self, patch: str, options: JudgeOptions) -> JudgeJob:
        base = resolve_rev(self.repo, options.base)
        if base not in self._bundles:
            made = bundle_revision(self.repo, base)
            self._bundles[base] = (made, bundle_cache.digest_of(made))
        bundle, digest = self._bundles[base]
        return JudgeJob(
            manifest_text=self.loaded.text,
            manifest_path=self.manifest_path,
            bundle=bundle,
            bundle_digest=digest,
            base_rev=base,
            patch=patch,
            options=replace(options, base=base, repo=None, cache_dir=None, holdout_dir=None),
            unsandboxed=self.unsandboxed,
            holdout=self.holdout,
        )

    def land(self, judged: Judged, ledger: Ledger) -> int:
        """The judgement in `ledger`, whole; returns its candidate id."""
        return replay(judged.calls, ledger, repo=self.repo, node=judged.node)
