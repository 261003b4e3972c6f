"""Reading the ledger back: the list of candidates with their status, one candidate whole, and
every candidate for an export."""

from __future__ import annotations

import json
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.ledger.store import LedgerStore


class LedgerReading(LedgerStore):
    """What `ledger list`, `ledger show` and `ledger export` read."""

    def entries(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT c.id, c.created_at, c.origin, c.target, c.base_rev, c.sandbox,"
            " v.verdict, v.rests_on, v.error, v.candidate_id IS NOT NULL AS finished"
            " FROM candidates c LEFT JOIN verdicts v ON v.candidate_id = c.id"
            " ORDER BY c.id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [self._status(dict(row)) for row in rows]

    @staticmethod
    def _status(row: dict[str, Any]) -> dict[str, Any]:
        if not row.pop("finished"):
            row["status"] = "unfinished"
        elif row["verdict"] is None:
            row["status"] = "error"
        else:
            row["status"] = row["verdict"]
        return row

    def show(self, candidate_id: int) -> dict[str, Any]:
        row = self._db.execute("SELECT * FROM candidates WHERE id = ?", (candidate_id,)).fetchone()
        if row is None:
            raise InfrastructureError(f"no candidate {candidate_id} in {self.path}")
        record = dict(row)
        record["facts"] = json.loads(record["facts"])
        record["gates"] = [
            {**dict(g), "detail": json.loads(g["detail"]), "passed": bool(g["passed"])}
            for g in self._db.execute(
                "SELECT name, passed, duration_s, detail, created_at FROM gates"
                " WHERE candidate_id = ? ORDER BY id",
                (candidate_id,),
            )
        ]
        record["commands"] = [
            {**dict(c), "argv": json.loads(c["argv"])}
            for c in self._db.execute(
                "SELECT stage, argv, exit_code, duration_s FROM commands WHERE candidate_id = ?"
                " ORDER BY id",
                (candidate_id,),
            )
        ]
        record["comparisons"] = [
            json.loads(c["body"])
            for c in self._db.execute(
                "SELECT body FROM comparisons WHERE candidate_id = ?", (candidate_id,)
            )
        ]
        record["samples"] = [
            {**dict(s), "reported": json.loads(s["reported"]) if s["reported"] else None}
            for s in self._db.execute(
                "SELECT series, workload, side, pair_index, position, wall_s, cpu_s,"
                " max_rss_kib, exit_code, stdout_sha256, env_pad, reported FROM samples"
                " WHERE candidate_id = ?"
                " ORDER BY series, workload, pair_index, position",
                (candidate_id,),
            )
        ]
        verdict = self._db.execute(
            "SELECT * FROM verdicts WHERE candidate_id = ?", (candidate_id,)
        ).fetchone()
        record["verdict"] = None
        if verdict is not None:
            record["verdict"] = {
                **dict(verdict),
                "reasons": json.loads(verdict["reasons"]),
                "timings": json.loads(verdict["timings"]),
            }
        return record

    def export(self) -> list[dict[str, Any]]:
        ids = [r[0] for r in self._db.execute("SELECT id FROM candidates ORDER BY id")]
        return [self.show(i) for i in ids]
