"""CSV: a record is a row (a quoted value may span lines and stays whole), a field a column.

Rows are read and written by the standard `csv` module, so every variant is a CSV file a CSV
reader takes as one; the header row is kept as it is (a program selects columns by name).
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Sequence

from speedproof.judge.inputs.mutate.fields import FieldOp, edit_token, has_digits, redraw_digits

Row = list[str]
_WORD = re.compile(r"[A-Za-z]+")
# Bytes that are not UTF-8 ride through str as surrogates, and back out unchanged.
_ERRORS = "surrogateescape"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors=_ERRORS)


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors=_ERRORS)


class Table:
    def __init__(self) -> None:
        self.ending = "\n"
        self.delimiter = ","

    def split(self, content: bytes) -> tuple[bytes, list[Row]]:
        text = _decode(content)
        first = text.split("\n", 1)[0]
        self.ending = "\r\n" if first.endswith("\r") else "\n"
        self.delimiter = "\t" if first.count("\t") > first.count(",") else ","
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter))
        if not rows:
            return b"", []
        return self._write(rows[:1]), rows[1:]

    def _write(self, rows: Sequence[Row]) -> bytes:
        out = io.StringIO(newline="")
        plain = csv.writer(out, delimiter=self.delimiter, lineterminator=self.ending)
        # The writer quotes a value holding the delimiter, a quote or "\n", not one holding a
        # lone "\r", which a reader takes as a line's end: such a row is written fully quoted.
        quoted = csv.writer(
            out, delimiter=self.delimiter, lineterminator=self.ending, quoting=csv.QUOTE_ALL
        )
        for row in rows:
            (quoted if any("\r" in value for value in row) else plain).writerow(row)
        return _encode(out.getvalue())

    def join(self, head: bytes, records: Sequence[Row]) -> bytes:
        return head + self._write(records)

    def edit(self, record: Row, op: FieldOp, rng: random.Random) -> Row:
        row = list(record)
        if not row:
            return ["x"]
        at = rng.randrange(len(row))
        if op == "delete":
            del row[at]
            return row
        row[at] = _decode(edit_token(op, _encode(row[at]), rng))
        return row

    def twin_edit(
        self, record: Row, rng: random.Random, records: Sequence[Row], keep: frozenset[bytes]
    ) -> Row:
        # Each value with even odds, at least one: digits redrawn (an id, a rating, a date stay
        # valid at their width), or a word of the same column in another row put for one of its
        # own words.
        row = list(record)
        if not row:
            return row
        chosen = [i for i in range(len(row)) if rng.random() < 0.5] or [rng.randrange(len(row))]
        for at in chosen:
            row[at] = self._twin_value(row[at], at, rng, records, keep)
        return row

    @staticmethod
    def _twin_value(
        value: str, at: int, rng: random.Random, records: Sequence[Row], keep: frozenset[bytes]
    ) -> str:
        if has_digits(_encode(value)):
            return _decode(redraw_digits(_encode(value), rng))
        words = [m for m in _WORD.finditer(value) if _encode(m.group().lower()) not in keep]
        donor = rng.choice(records)
        found: list[str] = _WORD.findall(donor[at]) if at < len(donor) else []
        given = [w for w in found if _encode(w.lower()) not in keep]
        if not words or not given:
            return value
        word = rng.choice(words)
        return value[: word.start()] + rng.choice(given) + value[word.end() :]
