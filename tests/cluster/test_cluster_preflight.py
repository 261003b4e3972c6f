"""A cluster's faults name their fix: a dead address ends in seconds naming it; a node whose
speedproof is another version, or missing, is named and left out before any job runs, and the
batch finishes on the others; a batch whose rows failed for the infrastructure retries them when
run again; measuring nodes on one host are warned about and are not "elsewhere" for each other.

The mixed cluster here is a real two-node Ray cluster on 127.0.0.1 (`cluster.loopback`, real
raylets from `ray.cluster_utils` rather than `ray start` by hand, which leaves processes behind
when a test fails; 1 CPU each, the lightest that fits 2 cores beside the tests' shared cluster),
whose second node resolves `speedproof` to a stub package put first on its PYTHONPATH: one of
another version, as a machine with a stale install, or one that fails to import. Commands talk
to it from fresh processes, as a user does, so this process stays connected to the tests'
shared cluster (`conftest`).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import speedproof
from speedproof.cluster import Cluster, LocalCluster, Placement, open_cluster
from speedproof.cluster.judging import node_facts
from speedproof.cluster.node_probe import find_tool
from speedproof.cluster.preflight import function_needs
from speedproof.corpus.jsonl import read_rows
from speedproof.functions.batch import verify_batch
from support.cluster import (
    CHEAP_STATUSES,
    DiesOn,
    cheap_rows,
    fails_for_the_node,
    write_jsonl,
)
from support.cluster_toy import node_name

TESTS = Path(__file__).resolve().parents[1]
SRC = Path(speedproof.__file__).resolve().parents[1]
STALE = "0.0.0+stale"


def _stub(folder: Path, body: str, verifier: str | None = None) -> Path:
    """A folder holding a package named speedproof whose __init__ is `body`, and, with
    `verifier`, a module where the driver's `verifier_digest` lives whose digest is that."""
    (folder / "speedproof").mkdir(parents=True)
    (folder / "speedproof" / "__init__.py").write_text(body, encoding="utf-8")
    if verifier is not None:
        *packages, module = str(function_needs().digest_module).split(".")
        place = folder.joinpath(*packages)
        place.mkdir(parents=True, exist_ok=True)
        for depth in range(2, len(packages) + 1):
            folder.joinpath(*packages[:depth], "__init__.py").touch()
        code = f"def verifier_digest():\n    return {verifier!r}\n"
        (place / f"{module}.py").write_text(code, encoding="utf-8")
    return folder


def _speedproof(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "speedproof", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=240)


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(SRC), str(TESTS)])
    return {**os.environ, "PYTHONPATH": path, **extra}


# The second node's speedproof (the same version with other verifier sources, another version,
# or one that fails to import) and the reason the preflight gives for leaving it out.
SECOND_NODES = {
    "other-verifier": (
        f"__version__ = {speedproof.__version__!r}\n",
        "its verifier digest is 000000",
        "install the same speedproof sources there",
    ),
    "stale": (
        f"__version__ = {STALE!r}\n",
        f"it runs speedproof {STALE} (from ",
        f"not the driver's {speedproof.__version__}: install the same version there",
    ),
    "broken": (
        "raise ImportError('a half-removed install')\n",
        "speedproof is not importable there (ImportError: a half-removed install)",
        "install it",
    ),
}


@pytest.fixture(scope="module", params=sorted(SECOND_NODES))
def mixed_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, tuple[str, str]]]:
    from speedproof.cluster.loopback import loopback_cluster

    body, *said = SECOND_NODES[request.param]
    verifier = "0" * 64 if request.param == "other-verifier" else None
    stub = _stub(tmp_path_factory.mktemp(request.param), body, verifier)
    good = os.pathsep.join([str(SRC), str(TESTS)])
    node_env = [{"PYTHONPATH": good}, {"PYTHONPATH": os.pathsep.join([str(stub), good])}]
    with loopback_cluster(nodes=2, cpus=1, node_env=node_env) as address:
        yield address, (said[0], said[1])


def _name_of(cluster: Cluster, node: str) -> str:
    with cluster.batch(node_name) as batch:
        batch.submit(None, Placement(node=node))
        return str(batch.next_finished().value)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_address_ends_within_a_minute_naming_the_address_and_the_fix(
    tmp_path: Path,
) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows())
    address = f"127.0.0.1:{_free_port()}"
    started = time.monotonic()
    done = _speedproof(
        "fn", "verify", "--batch", str(rows), "--out", str(tmp_path / "out.jsonl"),
        "--cluster", "ray",
        env=_env(RAY_ADDRESS=address),
        cwd=tmp_path,
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < 60, f"took {took:.0f} s"
    assert done.returncode == 3
    assert f"no Ray cluster answers at {address}" in done.stderr
    assert "ray start --head" in done.stderr and "RAY_ADDRESS" in done.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_an_address_that_accepts_but_never_answers_ends_at_the_named_deadline(
    tmp_path: Path,
) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows())
    with socket.socket() as silent:  # accepts TCP connections (the backlog) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        done = _speedproof(
            "fn", "verify", "--batch", str(rows), "--out", str(tmp_path / "out.jsonl"),
            "--cluster", "ray",
            env=_env(RAY_ADDRESS=address, SPEEDPROOF_RAY_CONNECT_TIMEOUT="8"),
            cwd=tmp_path,
        )  # fmt: skip
        took = time.monotonic() - started
    assert took < 40, f"took {took:.0f} s"
    assert done.returncode == 3
    assert "did not answer within" in done.stderr
    assert "SPEEDPROOF_RAY_CONNECT_TIMEOUT" in done.stderr


def test_a_node_without_speedproof_says_so_in_its_preflight_answer(tmp_path: Path) -> None:
    broken = _stub(tmp_path, "raise ImportError('a half-removed install')\n")
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "from speedproof.cluster import node_probe as p; "
        "sys.modules.pop('speedproof'); sys.path.insert(0, sys.argv[2]); "
        "print(json.dumps(p.probe(sys.argv[3], ('bwrap', 'no-such-tool-here'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(SRC), str(broken), str(function_needs().digest_module)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    report = json.loads(done.stdout)
    assert report["speedproof"] == {"error": "ImportError: a half-removed install"}
    assert report["tools"] == {"bwrap": find_tool("bwrap"), "no-such-tool-here": None}
    assert report["host"]["key"]


@pytest.mark.slow
def test_a_node_with_another_or_no_speedproof_is_named_and_left_out_and_the_batch_finishes(
    mixed_cluster: tuple[str, tuple[str, str]], tmp_path: Path
) -> None:
    address, reason = mixed_cluster
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows())
    out = tmp_path / "out.jsonl"
    done = _speedproof(
        "fn", "verify", "--batch", str(rows), "--out", str(out), "--cluster", "ray", "--json",
        env=_env(RAY_ADDRESS=address),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    left_out = re.search(
        r"node ([0-9a-f]{56}) on \S+ \(127\.0\.0\.1\) is left out: (.*)", done.stderr
    )
    assert left_out is not None, done.stderr[-2000:]
    assert reason[0] in left_out.group(2) and reason[1] in left_out.group(2)
    written = read_rows(out)
    assert {row["id"]: row["status"] for row in written} == CHEAP_STATUSES  # every row judged
    assert left_out.group(1) not in {row["node"] for row in written}


def test_a_rerun_retries_the_rows_that_failed_for_the_infrastructure_and_says_how_many(
    tmp_path: Path,
) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows())
    out = tmp_path / "out.jsonl"
    with LocalCluster(2) as cluster:
        first = verify_batch(rows, out, cluster, task=fails_for_the_node)
        assert first.unjudged == len(CHEAP_STATUSES)
        again = verify_batch(rows, out, cluster)
    written = read_rows(out)
    assert {row["id"]: row["status"] for row in written} == CHEAP_STATUSES
    assert len(written) == len(CHEAP_STATUSES)  # one row per id
    assert again.retried == len(CHEAP_STATUSES) and again.verified == len(CHEAP_STATUSES)


def test_a_node_reports_its_speedproof_and_ray_versions_and_its_own_cpus(
    ray_address: str,
) -> None:
    import ray

    with open_cluster("ray") as cluster:
        nodes = cluster.nodes()
        with cluster.batch(node_facts) as batch:
            jobs = {batch.submit(find_tool("go"), Placement(node=node.id)): node for node in nodes}
            found = {jobs[f.job].id: f.value for f in (batch.next_finished() for _ in jobs)}
    for node in nodes:
        facts = found[node.id]
        assert facts is not None
        assert (facts["speedproof"], facts["ray"]) == (speedproof.__version__, ray.__version__)
        assert facts["environment"]["cores"] == node.cpus == 1  # the node's, not the machine's
        assert facts["environment"]["go"], "a Go target's toolchain is in the facts"
        assert facts["host"]["key"] == node.host


def test_measuring_nodes_on_one_host_and_a_measuring_driver_host_are_warned_about(
    ray_address: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="speedproof.cluster"), open_cluster("ray") as cluster:
        nodes = cluster.nodes()
    said = [record.getMessage() for record in caplog.records]
    shared = [line for line in said if "share one host" in line]
    assert len(shared) == 1 and all(node.id[:12] in shared[0] for node in nodes)
    assert any("the driver's host" in line and "is a measuring node" in line for line in said)
    assert len({node.host for node in nodes}) == 1


# 11 s on a real Ray cluster; the re-run of infrastructure failures stays in `make test`.
@pytest.mark.slow
def test_a_job_its_node_keeps_failing_runs_again_on_another_node_and_a_pinned_one_stays(
    ray_address: str,
) -> None:
    with open_cluster("ray") as cluster, cluster.batch(DiesOn("head")) as batch:
        head = next(n.id for n in cluster.nodes() if _name_of(cluster, n.id) == "head")
        moved = [batch.submit(index) for index in range(4)]  # two of them are placed on the head
        pinned = batch.submit(9, Placement(node=head))
        done = {f.job: f for f in (batch.next_finished() for _ in range(5))}
    assert [done[job].value for job in moved] == ["extra"] * 4
    assert done[pinned].value is None and done[pinned].node == head
    assert done[pinned].error is not None and "died" in done[pinned].error.lower()
