"""The execution layer's local back end with the real verifier: worker processes on this
machine, a killed worker's job run again with its row written once, resumable batches served
from the cache, and no Ray anywhere unless asked for. The cases are corpus/v2's; every row here
is decided before Cachegrind, so the module takes seconds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from speedproof.cluster import (
    ClusterError,
    LocalCluster,
    Placement,
    measuring_on,
    open_cluster,
    run_all,
)
from speedproof.corpus.cache import VerificationCache
from speedproof.corpus.jsonl import read_rows
from speedproof.functions.batch import verify_batch
from support.cluster import (
    CHEAP_STATUSES,
    DieOnce,
    Marks,
    cheap_rows,
    comparable,
    killed_row_id,
    marks,
    write_jsonl,
)
from support.paths import ROOT


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter (this one has imported Ray for other tests)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT / "tests",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_local_batch_and_a_local_reward_import_nothing_of_ray(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows()[2:])
    done = _python(
        f"""
        import json, sys
        from typer.testing import CliRunner
        from speedproof.cli import app
        from speedproof.reward import rewards
        from support.cluster import NO_PATCH, dev_cases

        result = CliRunner().invoke(
            app, ["fn", "verify", "--batch", {str(rows)!r}, "--out", {str(tmp_path / "o")!r}]
        )
        values = rewards(dev_cases()[:1], [NO_PATCH])
        ray = sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))
        print(json.dumps({{"exit": result.exit_code, "rewards": values, "ray": ray}}))
        """
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {"exit": 0, "rewards": [-1.0], "ray": []}
    assert [r["status"] for r in read_rows(tmp_path / "o")] == [
        "policy_error",
        "patch_error",
        "patch_error",
    ]


def test_the_campaign_and_verify_import_nothing_of_ray_until_a_ray_cluster_is_asked_for() -> None:
    done = _python(
        """
        import json, sys
        import speedproof.cli, speedproof.campaign.waves, speedproof.verify.elsewhere
        from speedproof.cluster import open_cluster
        from speedproof.cluster.judging import Shipper, judge_on_node
        with open_cluster("local") as cluster:
            cluster.nodes()
        print(json.dumps(sorted(m for m in sys.modules if m == "ray" or m.startswith("ray."))))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_asking_for_ray_without_ray_installed_names_the_extra_in_one_line(
    tmp_path: Path,
) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", cheap_rows()[3:])
    done = _python(
        f"""
        import sys
        sys.modules["ray"] = None  # what an environment without the extra looks like
        from typer.testing import CliRunner
        from speedproof.cli import app

        result = CliRunner().invoke(app, [
            "fn", "verify", "--batch", {str(rows)!r}, "--out", {str(tmp_path / "o")!r},
            "--cluster", "ray",
        ])
        print(result.exit_code)
        print(result.output)
        """
    )
    assert done.returncode == 0, done.stderr
    code, *lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert code == "3"
    assert lines == ["error: the Ray back end needs Ray: pip install 'speedproof[ray]'"]


def test_an_unknown_cluster_and_a_node_the_local_cluster_lacks_are_refused() -> None:
    with pytest.raises(ClusterError, match="unknown cluster 'slurm'"):
        open_cluster("slurm")
    with LocalCluster(1) as cluster, cluster.batch(abs) as batch:
        with pytest.raises(ClusterError, match="no node 'gpu-7'"):
            batch.submit(-1, Placement(node="gpu-7"))
        assert batch.submit(-2, Placement(node="local", slot=True)) == 0
        assert batch.next_finished().value == 2


def test_the_local_measurement_slot_keeps_timed_jobs_apart_while_other_jobs_overlap(
    tmp_path: Path,
) -> None:
    timed, free = tmp_path / "timed", tmp_path / "free"
    with LocalCluster(2) as cluster:
        node = cluster.nodes()[0]
        for path, placement in ((timed, measuring_on(node)), (free, Placement())):
            with cluster.batch(Marks(str(path))) as batch:
                for name in ("a", "b"):
                    batch.submit(name, placement)
                assert sorted(str(batch.next_finished().value) for _ in "ab") == ["a", "b"]
    assert marks(timed) == ["start", "end", "start", "end"]  # one at a time, holding the slot
    assert marks(free) == ["start", "start", "end", "end"]  # side by side


def test_outcomes_come_back_once_each_and_a_raising_task_is_an_outcome_not_a_retry() -> None:
    with LocalCluster(2) as cluster:
        finished = list(run_all(cluster, int, ["1", "2", "x", "4"], window=2))
    assert sorted(f.job for f in finished) == [0, 1, 2, 3]
    by_job = {f.job: f for f in finished}
    assert [by_job[j].value for j in (0, 1, 3)] == [1, 2, 4]
    assert by_job[2].value is None and by_job[2].error is not None
    assert by_job[2].error.startswith("ValueError: invalid literal")
    assert {f.node for f in finished} == {"local"}
    assert cluster.restarts == 0


def test_a_local_worker_killed_mid_job_has_its_job_rerun_and_every_row_written_once(
    tmp_path: Path,
) -> None:
    rows = cheap_rows()
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    marker = tmp_path / "died"
    with LocalCluster(2) as cluster:
        report = verify_batch(source, tmp_path / "out.jsonl", cluster, task=DieOnce(str(marker)))
        restarts = cluster.restarts
    written = read_rows(tmp_path / "out.jsonl")
    assert marker.exists() and restarts == 1
    assert [r["id"] for r in written] == [r["id"] for r in rows]  # each once, in input order
    assert {r["id"]: r["status"] for r in written} == CHEAP_STATUSES
    assert report.verified == len(rows) and report.unjudged == 0
    victim = next(r for r in written if r["id"] == killed_row_id(marker, rows))
    assert victim["node"] == "local" and victim["verifier_digest"]


def test_a_rerun_skips_rows_already_written_and_serves_seeded_rows_from_the_cache(
    tmp_path: Path,
) -> None:
    rows = cheap_rows()
    source = write_jsonl(tmp_path / "rows.jsonl", rows[:2])
    book = VerificationCache(tmp_path / "cache.jsonl")
    with LocalCluster(2) as cluster:
        verify_batch(source, tmp_path / "a.jsonl", cluster, cache=book)
        # The same output again with more rows: only the new ones are verified.
        write_jsonl(source, rows)
        again = verify_batch(source, tmp_path / "a.jsonl", cluster, cache=book)
        # A new output with the same seeded rows: every verdict comes from the cache.
        cached = verify_batch(source, tmp_path / "b.jsonl", cluster, cache=book)
    assert (again.already_done, again.verified) == (2, 3)
    assert (cached.cached, cached.verified) == (5, 0)
    first, second = read_rows(tmp_path / "a.jsonl"), read_rows(tmp_path / "b.jsonl")
    assert [r["id"] for r in first] == [r["id"] for r in rows]
    assert all(r["cached"] for r in second)
    assert [comparable({**r, "cached": False}) for r in second] == [comparable(r) for r in first]
    assert len(VerificationCache(tmp_path / "cache.jsonl")) == 5  # written by this process once
