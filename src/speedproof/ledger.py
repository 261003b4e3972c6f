"""The ledger: an append-only SQLite record of every candidate, gate, command, sample and verdict.

Rows are only ever inserted. A candidate row is written before any work starts and each stage
commits as it finishes, so a crash or Ctrl-C mid-run leaves everything measured so far on disk and
a candidate with no verdict row, which `list` shows as `unfinished`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from speedproof.errors import InfrastructureError

LEDGER_FILE = "ledger.sqlite"
# 3: discoveries, hot_functions and proposer_outcomes (what discovery found at each parent, and
# why the proposer proposed nothing for a function); tables an older ledger gains when opened.
SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    campaign TEXT,
    origin TEXT NOT NULL,
    target TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_rev TEXT NOT NULL,
    patch_sha256 TEXT NOT NULL,
    diff TEXT NOT NULL,
    sandbox TEXT NOT NULL,
    facts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    name TEXT NOT NULL,
    passed INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    stage TEXT NOT NULL,
    argv TEXT NOT NULL,
    exit_code INTEGER,
    duration_s REAL
);
CREATE TABLE IF NOT EXISTS samples (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    series INTEGER NOT NULL,
    workload TEXT NOT NULL,
    side TEXT NOT NULL,
    pair_index INTEGER NOT NULL,
    position INTEGER NOT NULL,
    wall_s REAL,
    cpu_s REAL,
    max_rss_kib INTEGER,
    exit_code INTEGER,
    stdout_sha256 TEXT,
    env_pad INTEGER,
    reported TEXT
);
CREATE TABLE IF NOT EXISTS comparisons (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    workload TEXT NOT NULL,
    metric TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    verdict TEXT,
    reasons TEXT NOT NULL,
    rests_on TEXT,
    lane TEXT,
    error TEXT,
    timings TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_by_candidate ON samples(candidate_id);
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    target TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_rev TEXT NOT NULL,
    options TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    candidate_id INTEGER REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS role_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    candidate_id INTEGER REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    role TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    duration_s REAL NOT NULL,
    ok INTEGER NOT NULL,
    rejection TEXT,
    prompt_sha256 TEXT NOT NULL,
    answer TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS concerns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    severity TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS discoveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign TEXT,
    created_at TEXT NOT NULL,
    parent TEXT NOT NULL,
    profiler TEXT NOT NULL,
    unit TEXT NOT NULL,
    total REAL NOT NULL,
    workloads TEXT NOT NULL,
    notes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS hot_functions (
    discovery_id INTEGER NOT NULL REFERENCES discoveries(id),
    rank INTEGER NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    self_pct REAL NOT NULL,
    cum_pct REAL NOT NULL,
    samples INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS proposer_outcomes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    discovery_id INTEGER NOT NULL REFERENCES discoveries(id),
    created_at TEXT NOT NULL,
    function TEXT NOT NULL,
    role TEXT NOT NULL,
    rule TEXT,
    proposed INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_campaign ON events(campaign);
CREATE INDEX IF NOT EXISTS discoveries_by_campaign ON discoveries(campaign);
CREATE INDEX IF NOT EXISTS role_calls_by_campaign ON role_calls(campaign);
"""
# Columns added after version 1, for ledgers written by an older speedproof: (table, column, type).
_ADDED_COLUMNS = (("samples", "env_pad", "INTEGER"), ("samples", "reported", "TEXT"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def dumps(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True)


@dataclass(frozen=True)
class SampleRow:
    series: int
    workload: str
    side: str
    pair_index: int
    position: int
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    exit_code: int
    stdout_sha256: str
    env_pad: int = 0
    # Reported metrics of this run as (name, value) pairs; empty outside the reported lane.
    reported: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class RoleCall:
    """One model turn of a campaign role, with what it cost; `answer` is the raw text."""

    campaign: str | None
    candidate_id: int | None
    role: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_s: float
    ok: bool
    rejection: str | None
    prompt_sha256: str
    answer: str


@dataclass(frozen=True)
class HotFunctionRow:
    """One hot function as discovery ranked it (rank 1 is the hottest)."""

    rank: int
    name: str
    file: str
    start_line: int
    end_line: int
    self_pct: float
    cum_pct: float
    samples: int


@dataclass(frozen=True)
class ProposerOutcome:
    """Why the proposer did (`proposed`) or did not propose a change to `function`: one rule's
    outcome (`rule` set), or a role's own answer (`rule` None; `function` empty when the answer
    covers every hot function, like the coordinator's "nothing left")."""

    function: str
    role: str
    rule: str | None
    proposed: bool
    reason: str


class CandidateWriter(Protocol):
    """The six writes a judgement makes, in the order it makes them: the `Ledger` itself, or a
    stand-in that records them on a node for the driver to replay (`cluster.recording`)."""

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
    ) -> int: ...

    def add_gate(
        self, candidate_id: int, name: str, passed: bool, duration_s: float, detail: Any
    ) -> None: ...

    def add_commands(
        self,
        candidate_id: int,
        stage: str,
        commands: Sequence[tuple[Sequence[str], int | None, float | None]],
    ) -> None: ...

    def add_samples(self, candidate_id: int, rows: Sequence[SampleRow]) -> None: ...

    def add_comparisons(self, candidate_id: int, comparisons: Sequence[Any]) -> None: ...

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
    ) -> None: ...


class Ledger:
    """One SQLite file; every write commits immediately (WAL, so readers never block it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise InfrastructureError(f"cannot open the ledger at {path}: {exc}") from exc
        self._db.row_factory = sqlite3.Row
        # Called once with the id of the next candidate row, the moment it exists: a campaign
        # writes the role calls and concerns that led to the candidate against that row.
        self.on_candidate: Callable[[int], None] | None = None
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # WAL with NORMAL sync: a commit survives a crash of this process (the case that
        # matters: Ctrl-C, OOM, a killed campaign) without an fsync per sample.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._upgrade()
        self._db.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
        )

    def _upgrade(self) -> None:
        """Bring an older ledger up to this schema: the tables it lacks were made by the schema
        script (CREATE TABLE IF NOT EXISTS), the columns a version-1 ledger lacks are added here;
        rows already written keep NULL there."""
        for table, column, kind in _ADDED_COLUMNS:
            have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        self._db.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema' AND CAST(value AS INTEGER) < ?",
            (str(SCHEMA_VERSION), SCHEMA_VERSION),
        )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One committed write; the records of campaigns and calibrations use it too. Writes
        made through this ledger inside the block join it: a judgement replayed from a node
        lands whole or not at all."""
        with self._tx() as db:
            yield db

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows as dictionaries: the one read path for modules that keep their own records."""
        return [dict(row) for row in self._db.execute(sql, tuple(params))]

    @classmethod
    def in_folder(cls, folder: Path) -> Ledger:
        return cls(folder / LEDGER_FILE)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        if self._db.in_transaction:
            # Inside `transaction()`: committed, or rolled back, with the enclosing block.
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
                    _now(),
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
                (candidate_id, _now(), name, int(passed), duration_s, dumps(detail)),
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
                    _now(),
                    verdict,
                    dumps(list(reasons)),
                    rests_on,
                    lane,
                    error,
                    dumps(timings),
                ),
            )

    # ----- campaigns, events, role calls, concerns ----------------------------------------

    def start_campaign(
        self, campaign: str, *, target: str, repo: Path, base_rev: str, options: dict[str, Any]
    ) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO campaigns(id, created_at, target, repo, base_rev, options)"
                " VALUES (?,?,?,?,?,?)",
                (campaign, _now(), target, str(repo), base_rev, dumps(options)),
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
                (campaign, candidate_id, _now(), kind, dumps(body)),
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
                    _now(),
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
                    _now(),
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
                    (discovery_id, _now(), o.function, o.role, o.rule, int(o.proposed), o.reason)
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

    def add_concern(self, candidate_id: int, *, source: str, severity: str, text: str) -> None:
        """A reviewer's (or an advisor's) concern: stored and shown, never given to the policy."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO concerns(candidate_id, created_at, source, severity, text)"
                " VALUES (?,?,?,?,?)",
                (candidate_id, _now(), source, severity, text),
            )

    def concerns(self, candidate_id: int) -> list[dict[str, Any]]:
        return self.query(
            "SELECT source, severity, text, created_at FROM concerns WHERE candidate_id = ?"
            " ORDER BY id",
            (candidate_id,),
        )

    # ----- reading -------------------------------------------------------------------------

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
