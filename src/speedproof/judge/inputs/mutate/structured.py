"""JSON and JSON lines: a record is an element of the top-level array (or a value of the
top-level object), or one line; a field is a leaf (a number, a string, a boolean or null).

Values are read and written by the standard `json` module, so a variant stays JSON that a JSON
reader takes; only the values change: a leaf replaced by a JSON value Hypothesis draws (any
shape, `drawn.py`), numbers at their edges, strings in another case or with a NUL, a lone
surrogate or 5,000 characters, a key deleted, a value of another type.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from speedproof.judge.inputs.mutate.drawn import json_values
from speedproof.judge.inputs.mutate.fields import (
    LONG_ODDS,
    FieldOp,
    edit_token,
    has_digits,
    redraw_digits,
)
from speedproof.judge.inputs.mutate.lines import Lines, split_terminator

Path = tuple[str | int, ...]
NUMBER_EDGES: tuple[int | float, ...] = (0, 1, -1, 2**64, -(2**63) - 1, 1e308, -0.5)
_ODD_TEXT = ("\x00", "\ud800", "\r\n", "\u202e")


def leaves(value: Any, path: Path = ()) -> list[Path]:
    """The paths of every leaf under `value`."""
    if isinstance(value, dict) and value:
        return [p for key, item in value.items() for p in leaves(item, (*path, key))]
    if isinstance(value, list) and value:
        return [p for index, item in enumerate(value) for p in leaves(item, (*path, index))]
    return [path]  # a scalar, or an empty array or object


def _get(value: Any, path: Path) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def edit_value(value: Any, op: FieldOp, rng: random.Random) -> Any:
    """A deep copy of `value` with one leaf changed by `op` (or deleted)."""
    value = json.loads(json.dumps(value))
    paths = leaves(value)
    numeric = [p for p in paths if _is_number(_get(value, p))]
    path = rng.choice(numeric if op == "number" and numeric else paths)
    if op == "delete" and path:
        del _get(value, path[:-1])[path[-1]]
        return value
    return _set(value, path, _edited(_get(value, path), op, rng))


def _is_number(leaf: Any) -> bool:
    return isinstance(leaf, int | float) and not isinstance(leaf, bool)


def _edited(leaf: Any, op: FieldOp, rng: random.Random) -> Any:
    if op == "number":
        return rng.choice([edge for edge in NUMBER_EDGES if edge != leaf])
    if op == "odd":
        text = leaf if isinstance(leaf, str) else json.dumps(leaf)
        if rng.random() < LONG_ODDS:
            return (text or "x") * (5000 // max(1, len(text)) + 1)
        at = rng.randint(0, len(text))
        return text[:at] + rng.choice(_ODD_TEXT) + text[at:]
    if op == "alter":
        # A value of any JSON shape in its place, as Hypothesis draws them from this seed.
        return rng.choice(json_values(rng.getrandbits(32)))
    if isinstance(leaf, dict | list):
        return json.dumps(leaf)  # an empty array or object: a string in its place
    if isinstance(leaf, str):
        return edit_token(op, leaf.encode(), rng).decode("utf-8", errors="surrogateescape")
    if op == "case" or leaf is None:
        return json.dumps(leaf).upper()  # another type: a string where a value was
    if isinstance(leaf, bool):
        return not leaf
    return int(edit_token("alter", str(abs(int(leaf))).encode(), rng)) + 1


def twin_value(value: Any, rng: random.Random) -> Any:
    """A deep copy of `value` with every number and every digit run of a string redrawn at its
    width (each digit between 0 and itself), keys and types as they were."""
    if isinstance(value, dict):
        return {key: twin_value(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [twin_value(item, rng) for item in value]
    if isinstance(value, str) and has_digits(value.encode()):
        return redraw_digits(value.encode(), rng).decode()
    if _is_number(value):
        drawn = redraw_digits(repr(abs(value)).encode(), rng)
        number = float(drawn) if isinstance(value, float) else int(drawn)
        return -number if value < 0 else number
    return value


def _dump(value: Any, compact: bool, indent: int | None = None) -> bytes:
    separators = (",", ":") if compact else None
    text = json.dumps(value, ensure_ascii=False, separators=separators, indent=indent)
    return text.encode("utf-8", errors="surrogateescape")


class Document:
    """One JSON document; its records are its top-level array's elements or object's items."""

    def __init__(self) -> None:
        self.shape: type = list
        self.compact = False
        self.indent: int | None = None

    def split(self, content: bytes) -> tuple[bytes, list[Any]]:
        value = json.loads(content)
        self.compact = b'": ' not in content[:4096] and b", " not in content[:4096]
        self.indent = 2 if b"\n  " in content[:4096] else None
        self.shape = type(value) if isinstance(value, dict | list) else list
        if isinstance(value, dict):
            return b"", [list(item) for item in value.items()]
        return b"", list(value) if isinstance(value, list) else [value]

    def join(self, head: bytes, records: Sequence[Any]) -> bytes:
        if self.shape is dict:
            built: Any = {str(key): item for key, item in records}
        else:
            built = list(records)
        return head + _dump(built, self.compact, self.indent) + b"\n"

    def edit(self, record: Any, op: FieldOp, rng: random.Random) -> Any:
        if self.shape is dict:
            key, item = record
            return [key, edit_value(item, op, rng)]
        return edit_value(record, op, rng)

    def twin_edit(
        self, record: Any, rng: random.Random, records: Sequence[Any], keep: frozenset[bytes]
    ) -> Any:
        if self.shape is dict:
            return [record[0], twin_value(record[1], rng)]
        return twin_value(record, rng)


class JsonLines:
    """JSON lines: a line that does not parse is edited as text."""

    def split(self, content: bytes) -> tuple[bytes, list[bytes]]:
        return Lines().split(content)

    def join(self, head: bytes, records: Sequence[bytes]) -> bytes:
        return Lines().join(head, records)

    def edit(self, record: bytes, op: FieldOp, rng: random.Random) -> bytes:
        body, ending = split_terminator(record)
        try:
            value = json.loads(body)
        except ValueError:
            return Lines().edit(record, op, rng)
        return _dump(edit_value(value, op, rng), b'": ' not in body) + ending

    def twin_edit(
        self, record: bytes, rng: random.Random, records: Sequence[bytes], keep: frozenset[bytes]
    ) -> bytes:
        body, ending = split_terminator(record)
        try:
            value = json.loads(body)
        except ValueError:
            return Lines().twin_edit(record, rng, records, keep)
        return _dump(twin_value(value, rng), b'": ' not in body) + ending
