"""The ledger's file: one SQLite database, opened in WAL mode, brought up to this schema, and the
one transaction every write goes through."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from speedproof.ground.errors import InfrastructureError
from speedproof.ledger.schema import ADDED_COLUMNS, LEDGER_FILE, SCHEMA, SCHEMA_VERSION


class LedgerStore:
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
        self._db.executescript(SCHEMA)
        self._upgrade()
        self._db.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
        )

    def _upgrade(self) -> None:
        """Bring an older ledger up to this schema: the tables it lacks were made by the schema
        script (CREATE TABLE IF NOT EXISTS), the columns a version-1 ledger lacks are added here;
        rows already written keep NULL there."""
        for table, column, kind in ADDED_COLUMNS:
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
    def in_folder(cls, folder: Path) -> Self:
        return cls(folder / LEDGER_FILE)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
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
