"""Reading records: the lines of a text file, or chosen columns of each row of a CSV file."""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO


class InputError(Exception):
    """An input cannot be read as asked: a missing column, a file that is not UTF-8."""


class Record:
    """One unit of text: a line of a text file, or the chosen columns of one CSV row."""

    __slots__ = ("group", "text")

    def __init__(self, text: str, group: str | None = None) -> None:
        self.text = text
        self.group = group

    def __repr__(self) -> str:
        return f"Record({self.text!r}, {self.group!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.text, self.group) == (other.text, other.group)


def read_records(
    name: str, columns: list[str] | None = None, group_by: str | None = None
) -> Iterator[Record]:
    """The records of the file `name` ("-" for standard input, read as plain text).

    Files whose name ends in .csv are read as CSV with a header row; the text of a row is its
    `columns` joined by a space (the last column when none are named), and its group is the
    value of the `group_by` column.
    """
    try:
        if name == "-":
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline="")
            yield from _lines(stdin)
            return
        with open(name, encoding="utf-8", newline="") as f:
            if os.path.splitext(name)[1].lower() == ".csv":
                yield from _rows(f, name, columns, group_by)
            else:
                yield from _lines(f)
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _lines(f: TextIO) -> Iterator[Record]:
    for line in f:
        yield Record(line.rstrip("\r\n"))


def _rows(
    f: TextIO, name: str, columns: list[str] | None, group_by: str | None
) -> Iterator[Record]:
    reader = csv.DictReader(f)
    header = reader.fieldnames or []
    if not header:
        return
    wanted = columns or [header[-1]]
    for column in [*wanted, *([group_by] if group_by else [])]:
        if column not in header:
            raise InputError(f"{name}: no column {column!r} (it has: {', '.join(header)})")
    for row in reader:
        text = " ".join(row[column] or "" for column in wanted)
        yield Record(text, row[group_by] if group_by else None)
