"""The judge's rows: one candidate, its gates, commands, samples, comparisons and verdict, each
committed as it is written, and the concerns a reviewer or an advisor raised about it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from speedproof.ledger.rows import SampleRow, dumps, now
from speedproof.ledger.store import LedgerStore


class CandidateRecords(LedgerStore):
    """The writes of one judgement, in the order it makes them (`CandidateWriter`)."""

    def start_candidate(
        self,
        *,
        origin: str,
        target: str,
        repo: Path,
        base_rev: str,
        patch_sha256: str,
        diff: str,
        sandbox: str,
        facts: dict[str, Any],
        campaign: str | None = None,
    ) -> int:
        with self._tx() as db:
            cursor = db.execute(
                "INSERT INTO candidates(created_at, campaign, origin, target, repo, base_rev,"
                " patch_sha256, diff, sandbox, facts) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    now(),
                    campaign,
                    origin,
                    target,
                    str(repo),
                    base_rev,
                    patch_sha256,
                    diff,
                    sandbox,
                    dumps(facts),
                ),
            )
            candidate_id = int(cursor.lastrowid or 0)
        hook, self.on_candidate = self.on_candidate, None
        if hook is not None:
            hook(candidate_id)
        return candidate_id

    def add_gate(
        self, candidate_id: int, name: str, passed: bool, duration_s: float, detail: Any
    ) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO gates(candidate_id, created_at, name, passed, duration_s, detail)"
                " VALUES (?,?,?,?,?,?)",
                (candidate_id, now(), name, int(passed), duration_s, dumps(detail)),
            )

    def add_commands(
        self,
        candidate_id: int,
        stage: str,
        commands: Sequence[tuple[Sequence[str], int | None, float | None]],
    ) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO commands(candidate_id, stage, argv, exit_code, duration_s)"
                " VALUES (?,?,?,?,?)",
                [
                    (candidate_id, stage, dumps(list(argv)), code, secs)
                    for argv, code, secs in commands
                ],
            )

    def add_samples(self, candidate_id: int, rows: Sequence[SampleRow]) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO samples(candidate_id, series, workload, side, pair_index, position,"
                " wall_s, cpu_s, max_rss_kib, exit_code, stdout_sha256, env_pad, reported)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        candidate_id,
                        r.series,
                        r.workload,
                        r.side,
                        r.pair_index,
                        r.position,
                        r.wall_s,
                        r.cpu_s,
                        r.max_rss_kib,
                        r.exit_code,
                        r.stdout_sha256,
                        r.env_pad,
                        dumps(dict(r.reported)) if r.reported else None,
                    )
                    for r in rows
                ],
            )

    def add_comparisons(self, candidate_id: int, comparisons: Sequence[Any]) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT INTO comparisons(candidate_id, workload, metric, body) VALUES (?,?,?,?)",
                [(candidate_id, c.workload, c.metric, dumps(c)) for c in comparisons],
            )

    def finish(
        self,
        candidate_id: int,
        *,
        verdict: str | None,
        reasons: Sequence[str],
        rests_on: str | None,
        lane: str | None,
        timings: dict[str, float],
        error: str | None = None,
    ) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO verdicts(candidate_id, created_at, verdict, reasons, rests_on, lane,"
                " error, timings) VALUES (?,?,?,?,?,?,?,?)",
                (
                    candidate_id,
                    now(),
                    verdict,
                    dumps(list(reasons)),
                    rests_on,
                    lane,
                    error,
                    dumps(timings),
                ),
            )

    def add_concern(self, candidate_id: int, *, source: str, severity: str, text: str) -> None:
        """A reviewer's (or an advisor's) concern: stored and shown, never given to the policy."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO concerns(candidate_id, created_at, source, severity, text)"
                " VALUES (?,?,?,?,?)",
                (candidate_id, now(), source, severity, text),
            )

    def concerns(self, candidate_id: int) -> list[dict[str, Any]]:
        return self.query(
            "SELECT source, severity, text, created_at FROM concerns WHERE candidate_id = ?"
            " ORDER BY id",
            (candidate_id,),
        )
