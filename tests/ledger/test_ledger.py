from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ledger import SCHEMA_VERSION, Ledger, SampleRow


def _start(ledger: Ledger) -> int:
    return ledger.start_candidate(
        origin="judge",
        target="demo",
        repo=Path("/repo"),
        base_rev="a" * 40,
        patch_sha256="b" * 64,
        diff="--- a/x\n+++ b/x\n",
        sandbox="bwrap",
        facts={"cpu": "test"},
    )


def test_a_started_candidate_without_a_verdict_lists_as_unfinished(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        candidate = _start(ledger)
        ledger.add_gate(candidate, "guard", True, 0.01, {"violations": []})
    # A fresh connection sees everything: each write committed on its own.
    with Ledger.in_folder(tmp_path) as ledger:
        rows = ledger.entries()
        assert rows[0]["status"] == "unfinished"
        assert ledger.show(candidate)["gates"][0]["name"] == "guard"


def test_a_finished_candidate_keeps_its_samples_reasons_and_verdict(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        candidate = _start(ledger)
        ledger.add_samples(
            candidate,
            [SampleRow(0, "big", "baseline", 0, 0, 0.1, 0.09, 2048, 0, "c" * 64)],
        )
        ledger.finish(
            candidate,
            verdict="accepted",
            reasons=["faster"],
            rests_on="big",
            lane="timed",
            timings={"total": 1.0},
        )
        record = ledger.show(candidate)
    assert record["verdict"]["verdict"] == "accepted"
    assert record["verdict"]["reasons"] == ["faster"]
    assert record["samples"][0]["wall_s"] == 0.1
    assert record["facts"] == {"cpu": "test"}


def test_a_verdict_cannot_be_written_twice(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        candidate = _start(ledger)
        ledger.finish(candidate, verdict=None, reasons=[], rests_on=None, lane=None, timings={})
        with pytest.raises(sqlite3.IntegrityError):
            ledger.finish(
                candidate, verdict="accepted", reasons=[], rests_on=None, lane=None, timings={}
            )
        assert ledger.entries()[0]["status"] == "error"


def test_showing_an_unknown_candidate_is_a_named_error(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger, pytest.raises(InfrastructureError):
        ledger.show(7)


def test_export_returns_every_candidate_in_order(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        first, second = _start(ledger), _start(ledger)
        assert [r["id"] for r in ledger.export()] == [first, second]


def test_a_version_one_ledger_gains_the_new_sample_columns_and_keeps_its_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema', '1');"
        "CREATE TABLE samples (candidate_id INTEGER NOT NULL, series INTEGER NOT NULL,"
        " workload TEXT NOT NULL, side TEXT NOT NULL, pair_index INTEGER NOT NULL,"
        " position INTEGER NOT NULL, wall_s REAL, cpu_s REAL, max_rss_kib INTEGER,"
        " exit_code INTEGER, stdout_sha256 TEXT);"
        "INSERT INTO samples VALUES (7, 0, 'w', 'baseline', 0, 0, 0.1, 0.1, 10, 0, 'x');"
    )
    old.commit()
    old.close()
    with Ledger(path) as ledger:
        rows = ledger.query("SELECT * FROM samples")
        assert rows == [
            {
                "candidate_id": 7,
                "series": 0,
                "workload": "w",
                "side": "baseline",
                "pair_index": 0,
                "position": 0,
                "wall_s": 0.1,
                "cpu_s": 0.1,
                "max_rss_kib": 10,
                "exit_code": 0,
                "stdout_sha256": "x",
                "env_pad": None,
                "reported": None,
            }
        ]
        assert ledger.query("SELECT value FROM meta WHERE key = 'schema'") == [
            {"value": str(SCHEMA_VERSION)}
        ]


def test_a_sample_keeps_its_environment_pad_and_reported_metrics(tmp_path: Path) -> None:
    with Ledger.in_folder(tmp_path) as ledger:
        candidate = _start(ledger)
        row = SampleRow(0, "w", "candidate", 0, 1, 0.2, 0.2, 99, 0, "d" * 64, 1234, (("ok", 1.0),))
        ledger.add_samples(candidate, [row])
        (sample,) = ledger.show(candidate)["samples"]
        assert sample["env_pad"] == 1234
        assert sample["reported"] == {"ok": 1.0}
