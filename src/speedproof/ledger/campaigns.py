"""A campaign's rows: its start, its events, its role calls and what discovery found."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from speedproof.ledger.rows import HotFunctionRow, ProposerOutcome, RoleCall, dumps, now
from speedproof.ledger.store import LedgerStore


class CampaignRecords(LedgerStore):
    """Campaigns, events, role calls and discoveries."""

    def start_campaign(
        self, campaign: str, *, target: str, repo: Path, base_rev: str, options: dict[str, Any]
    ) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO campaigns(id, created_at, target, repo, base_rev, options)"
                " VALUES (?,?,?,?,?,?)",
                (campaign, now(), target, str(repo), base_rev, dumps(options)),
            )

    def campaign(self, campaign: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM campaigns WHERE id = ?", (campaign,))
        if not rows:
            return None
        return {**rows[0], "options": json.loads(rows[0]["options"])}

    def add_event(
        self,
        campaign: str | None,
        kind: str,
        body: dict[str, Any],
        *,
        candidate_id: int | None = None,
    ) -> int:
        """One thing that happened: a campaign's start, a resume, an exit, a calibration …"""
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO events(campaign, candidate_id, created_at, kind, body)"
                " VALUES (?,?,?,?,?)",
                (campaign, candidate_id, now(), kind, dumps(body)),
            )
            return int(cursor.lastrowid or 0)

    def events(self, campaign: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        """Events in order; `campaign=None` reads the ones recorded outside any campaign."""
        sql = "SELECT * FROM events WHERE campaign IS ?"
        params: list[Any] = [campaign]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        return [
            {**row, "body": json.loads(row["body"])}
            for row in self.query(sql + " ORDER BY id", params)
        ]

    def add_role_call(self, call: RoleCall) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO role_calls(campaign, candidate_id, created_at, role, provider, model,"
                " input_tokens, output_tokens, cost_usd, duration_s, ok, rejection,"
                " prompt_sha256, answer) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    call.campaign,
                    call.candidate_id,
                    now(),
                    call.role,
                    call.provider,
                    call.model,
                    call.input_tokens,
                    call.output_tokens,
                    call.cost_usd,
                    call.duration_s,
                    int(call.ok),
                    call.rejection,
                    call.prompt_sha256,
                    call.answer,
                ),
            )

    def role_calls(self, campaign: str) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM role_calls WHERE campaign = ? ORDER BY id", (campaign,))

    def add_discovery(
        self,
        campaign: str | None,
        *,
        parent: str,
        profiler: str,
        unit: str,
        total: float,
        workloads: Sequence[str],
        notes: Sequence[str],
        functions: Sequence[HotFunctionRow],
    ) -> int:
        """What one profiling of `parent` found: its id, for the outcomes recorded against it."""
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO discoveries(campaign, created_at, parent, profiler, unit, total,"
                " workloads, notes) VALUES (?,?,?,?,?,?,?,?)",
                (
                    campaign,
                    now(),
                    parent,
                    profiler,
                    unit,
                    total,
                    dumps(list(workloads)),
                    dumps(list(notes)),
                ),
            )
            discovery_id = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT INTO hot_functions(discovery_id, rank, name, file, start_line, end_line,"
                " self_pct, cum_pct, samples) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        discovery_id,
                        f.rank,
                        f.name,
                        f.file,
                        f.start_line,
                        f.end_line,
                        f.self_pct,
                        f.cum_pct,
                        f.samples,
                    )
                    for f in functions
                ],
            )
        return discovery_id

    def add_outcomes(self, discovery_id: int, outcomes: Sequence[ProposerOutcome]) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO proposer_outcomes(discovery_id, created_at, function, role, rule,"
                " proposed, reason) VALUES (?,?,?,?,?,?,?)",
                [
                    (discovery_id, now(), o.function, o.role, o.rule, int(o.proposed), o.reason)
                    for o in outcomes
                ],
            )

    def discoveries(self, campaign: str | None) -> list[dict[str, Any]]:
        """Each discovery row of `campaign` in order (JSON columns as written), with its
        `functions` (hot_functions rows by rank) and `outcomes` (proposer_outcomes rows in the
        order written)."""
        found = self.query("SELECT * FROM discoveries WHERE campaign IS ? ORDER BY id", (campaign,))
        for row in found:
            row["functions"] = self.query(
                "SELECT * FROM hot_functions WHERE discovery_id = ? ORDER BY rank", (row["id"],)
            )
            row["outcomes"] = self.query(
                "SELECT * FROM proposer_outcomes WHERE discovery_id = ? ORDER BY id", (row["id"],)
            )
        return found
