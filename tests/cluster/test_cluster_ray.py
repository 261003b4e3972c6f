"""The Ray back end on a real Ray cluster: a head and a second node on 127.0.0.1, started once
for the whole session (about 10 s, `conftest.loopback_ray`) and shared by every Ray test.
Verdicts on corpus/v2 cases equal a local run's row for row; a worker killed in the middle of a
job has the job rerun on a live worker, its row written once; a pinned job runs on its node
holding the node's measurement slot; evaluation and rewards through Ray equal their local
runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import LoopbackRay
from speedproof.agents.providers.replay import ReplayProvider, recorded_line
from speedproof.cli import app
from speedproof.cluster import (
    Cluster,
    ClusterError,
    LocalCluster,
    Placement,
    measuring_on,
    open_cluster,
    run_all,
)
from speedproof.corpus.evaluate import EvalConfig, evaluate
from speedproof.corpus.jsonl import read_rows
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.prompts import build_messages
from speedproof.corpus.splits import split_path
from speedproof.functions.batch import verify_batch
from speedproof.functions.case import model_view
from speedproof.reward import rewards
from support.cluster import (
    CHEAP_STATUSES,
    INVALID,
    NO_PATCH,
    DieOnce,
    Marks,
    cheap_rows,
    comparable,
    dev_cases,
    fast_patch,
    killed_row_id,
    marks,
    write_jsonl,
    wrong_patch,
)

TESTS = Path(__file__).resolve().parent


@pytest.fixture()
def on_ray(ray_address: str) -> Iterator[Cluster]:
    with open_cluster("ray") as cluster:
        yield cluster


@pytest.mark.slow
def test_corpus_verdicts_on_ray_equal_the_local_run_row_for_row(
    ray_address: str, tmp_path: Path
) -> None:
    cases = dev_cases()
    # Frequency index: among the cheapest cases to measure (a reference of about 33 M Ir).
    measured = next(case for case in cases if case.family == "frequency_index")
    rows = write_jsonl(
        tmp_path / "rows.jsonl",
        [
            {"id": "fast", "case_id": measured.id, "patch": fast_patch(measured), "seed": 3},
            {"id": "wrong", "case_id": cases[1].id, "patch": wrong_patch(cases[1]), "seed": 3},
            {"id": "invalid", "case_id": cases[2].id, "patch": INVALID, "seed": 3},
        ],
    )
    # The Ray side as a user runs it: a fresh process that finds the cluster through
    # RAY_ADDRESS. It starts first, so that its start-up overlaps the local run.
    remote = subprocess.Popen(
        [
            sys.executable, "-m", "speedproof", "fn", "verify", "--batch", str(rows),
            "--out", str(tmp_path / "ray.jsonl"), "--cluster", "ray", "--json",
        ],
        env={**os.environ, "RAY_ADDRESS": ray_address},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    local = CliRunner().invoke(
        app, ["fn", "verify", "--batch", str(rows), "--out", str(tmp_path / "local.jsonl")]
    )
    stdout, stderr = remote.communicate(timeout=300)
    assert local.exit_code == 0, local.output
    assert remote.returncode == 0, stderr
    assert json.loads(stdout)["verified"] == 3
    here, there = read_rows(tmp_path / "local.jsonl"), read_rows(tmp_path / "ray.jsonl")
    assert [r["status"] for r in here] == ["passed", "mismatch", "patch_error"]
    assert here[0]["reward"] > 1.0 and here[0]["cand_ir"] < here[0]["ref_ir"]
    assert [comparable(r) for r in there] == [comparable(r) for r in here]  # counts, rewards
    assert {r["node"] for r in here} == {"local"}
    assert all(len(r["node"]) == 56 for r in there)  # Ray node ids


def test_a_ray_worker_killed_mid_job_has_its_job_retried_and_every_row_written_once(
    on_ray: Cluster, tmp_path: Path
) -> None:
    rows = cheap_rows()
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    marker = tmp_path / "died"
    report = verify_batch(source, tmp_path / "out.jsonl", on_ray, task=DieOnce(str(marker)))
    written = read_rows(tmp_path / "out.jsonl")
    assert marker.exists()  # a worker really died
    assert [r["id"] for r in written] == [r["id"] for r in rows]  # each once, in input order
    assert {r["id"]: r["status"] for r in written} == CHEAP_STATUSES
    assert report.verified == len(rows) and report.unjudged == 0
    victim = next(r for r in written if r["id"] == killed_row_id(marker, rows))
    assert victim["node"] in {node.id for node in on_ray.nodes()}


def test_a_job_pinned_to_a_node_runs_there_holding_that_nodes_measurement_slot(
    on_ray: Cluster,
) -> None:
    nodes = on_ray.nodes()
    assert len(nodes) == 2 and [node.slots for node in nodes] == [1, 1]
    with on_ray.batch(abs) as batch:
        jobs = {batch.submit(-i, Placement(node=nodes[i % 2].id, slot=True)): i for i in range(6)}
        finished = [batch.next_finished() for _ in jobs]
    assert sorted(f.value for f in finished if f.value is not None) == list(range(6))
    assert all(f.node == nodes[jobs[f.job] % 2].id for f in finished)


def test_a_timed_job_holding_its_nodes_cpus_keeps_every_other_job_off_that_node(
    on_ray: Cluster, tmp_path: Path
) -> None:
    node = on_ray.nodes()[0]
    small = Placement(node=node.id, cpus=0.5)  # a job that would fit beside half a CPU
    whole, half = tmp_path / "whole", tmp_path / "half"
    for path, timed in (
        (whole, measuring_on(node)),
        (half, Placement(node=node.id, slot=True, cpus=0.5)),
    ):
        with on_ray.batch(Marks(str(path))) as batch:
            batch.submit("timed", timed)
            batch.submit("small", small)
            assert {batch.next_finished().value for _ in "ab"} == {"timed", "small"}
    assert marks(whole) == ["start", "end", "start", "end"]
    assert marks(half) == ["start", "start", "end", "end"]
    with on_ray.batch(abs) as batch, pytest.raises(ClusterError, match="not the 64 a job"):
        batch.submit(-1, Placement(node=node.id, cpus=64))


def test_a_ray_client_address_runs_jobs_and_lists_the_clusters_nodes(
    on_ray: Cluster, loopback_ray: LoopbackRay
) -> None:
    # Ray Client from a fresh process, as a user on another machine would connect.
    code = f"""
import json
from speedproof.cluster import measuring_on, open_cluster, run_all

with open_cluster({loopback_ray.client!r}) as cluster:
    nodes = cluster.nodes()
    values = sorted(f.value for f in run_all(cluster, abs, range(-4, 0)))
    with cluster.batch(abs) as batch:
        batch.submit(-7, measuring_on(nodes[-1]))
        pinned = batch.next_finished()
print(json.dumps({{
    "nodes": sorted(n.id for n in nodes), "slots": [n.slots for n in nodes], "values": values,
    "pinned": [pinned.value, pinned.node == nodes[-1].id],
}}))
"""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    # The client server forks a server and a worker per connection: 28 s alone on 2 cores, past
    # the 30 s default deadline under a full `make test`. The deadline has tests of its own.
    env["SPEEDPROOF_RAY_CONNECT_TIMEOUT"] = "150"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["nodes"] == sorted(node.id for node in on_ray.nodes())
    assert report["slots"] == [1, 1]
    assert report["values"] == [1, 2, 3, 4]
    assert report["pinned"] == [7, True]


class Aborts:
    """An `init` that aborts its first `failures` calls, as Ray Client's proxy does when the
    server it forks for a connection dies."""

    def __init__(self, failures: int, error: type[ConnectionError] = ConnectionAbortedError):
        self.failures, self.error, self.calls = failures, error, 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error("Initialization failure from server")


def test_an_aborted_ray_client_connection_is_tried_again_up_to_three_times(
    ray_address: str,
) -> None:
    # Imported once the session's cluster has set what Ray reads on import.
    from speedproof.cluster.ray_cluster import connect

    twice = Aborts(failures=2)
    connect(twice)
    assert twice.calls == 3
    always = Aborts(failures=99)
    with pytest.raises(ConnectionAbortedError, match="after 3 attempts"):
        connect(always)
    assert always.calls == 3


def test_a_refused_ray_connection_is_not_tried_again(ray_address: str) -> None:
    from speedproof.cluster.ray_cluster import connect

    refused = Aborts(failures=1, error=ConnectionRefusedError)
    with pytest.raises(ConnectionRefusedError):
        connect(refused)
    assert refused.calls == 1


def test_evaluation_through_ray_writes_the_rows_a_local_evaluation_writes(
    on_ray: Cluster, tmp_path: Path
) -> None:
    cases = dev_cases()[:3]
    answers = [wrong_patch(cases[0]), INVALID, NO_PATCH]
    recording = tmp_path / "student.jsonl"
    write_jsonl(
        recording,
        [
            json.loads(recorded_line("student", text, messages=build_messages(model_view(c))))
            for c, text in zip(cases, answers, strict=True)
        ],
    )
    reports = {}
    with LocalCluster(2) as local:
        for name, cluster in (("local", local), ("ray", on_ray)):
            reports[name] = evaluate(
                cases,
                ReplayProvider(recording),
                EvalConfig(split="dev", seed=11),
                tmp_path / name,
                split_file=split_path(DEFAULT_CORPUS, "dev"),
                provider_name="replay",
                cluster=cluster,
            )
    here, there = (
        [{k: v for k, v in row.items() if k != "timestamp"} for row in read_rows(path)]
        for path in (tmp_path / "local" / "results.jsonl", tmp_path / "ray" / "results.jsonl")
    )
    assert [r["category"] for r in here] == ["semantic_failure", "invalid_patch", "formatting"]
    assert there == here
    assert reports["ray"]["total"] == reports["local"]["total"]


def test_rewards_through_ray_equal_local_rewards_and_count_nothing_as_infrastructure(
    on_ray: Cluster,
) -> None:
    cases = dev_cases()[:2]
    completions = [wrong_patch(cases[0]), [{"role": "assistant", "content": NO_PATCH}]]
    assert rewards(cases, completions, cluster=on_ray, seed=5) == [-1.0, -1.0]
    assert rewards(cases, completions, seed=5) == [-1.0, -1.0]


def test_the_layer_returns_each_of_many_small_jobs_once_on_ray(on_ray: Cluster) -> None:
    finished = list(run_all(on_ray, abs, range(-300, 0)))
    assert sorted(f.job for f in finished) == list(range(300))
    assert all(f.value == 300 - f.job for f in finished)
