"""JSON-lines files: append-only with fsync, and strict reading that names the bad line."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from speedproof.corpus.errors import CorpusError


def dumps(row: object) -> str:
    """Canonical one-line JSON: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def append_rows(path: Path, rows: Iterable[object]) -> None:
    """Append rows and fsync before returning, so a row reported written survives a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(dumps(row) + "\n" for row in rows)
    if not text:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def write_rows(path: Path, rows: Iterable[object]) -> None:
    """Write a whole file atomically (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def read_rows(path: Path, *, tolerate_torn_tail: bool = False) -> list[dict[str, Any]]:
    """Every row of a JSON-lines file, each a JSON object.

    With `tolerate_torn_tail`, a last line without its newline that does not parse (a write cut
    short by a crash) is dropped; anywhere else a bad line is a `CorpusError` naming it.
    """
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    torn = lines[-1] if lines[-1].strip() else None
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines[:-1], start=1):
        if line.strip():
            rows.append(_parse(path, number, line))
    if torn is not None:
        try:
            rows.append(_parse(path, len(lines), torn))
        except CorpusError:
            if not tolerate_torn_tail:
                raise
    return rows


def _parse(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as err:
        raise CorpusError(f"{path}:{number}: not JSON: {err.msg}") from err
    if not isinstance(row, dict):
        raise CorpusError(f"{path}:{number}: expected a JSON object")
    return row


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def drop_torn_tail(path: Path) -> None:
    """Cut a last line that lacks its newline (a crash mid-write) before appending after it."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as handle:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
