"""Line-oriented text (logs, prose): a record is a line, a field a whitespace-separated token."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from speedproof.judge.inputs.mutate.fields import (
    FieldOp,
    edit_token,
    has_digits,
    is_number,
    redraw_digits,
)

_SPACE = re.compile(rb"(\s+)")
_WORD = re.compile(rb"^[A-Za-z]+$")


def split_terminator(line: bytes) -> tuple[bytes, bytes]:
    """(body, the line's ending: CRLF, LF or nothing)."""
    for ending in (b"\r\n", b"\n"):
        if line.endswith(ending):
            return line[: -len(ending)], ending
    return line, b""


def tokens(body: bytes) -> list[bytes]:
    """The body split into tokens and the spaces between them, alternating (tokens at even
    places), so that joining the parts gives the body back."""
    return _SPACE.split(body)


class Lines:
    def split(self, content: bytes) -> tuple[bytes, list[bytes]]:
        return b"", content.splitlines(keepends=True)

    def join(self, head: bytes, records: Sequence[bytes]) -> bytes:
        # A record that lost its ending to a shuffle must not run into the next one.
        fixed = [r if r.endswith(b"\n") else r + b"\n" for r in records[:-1]]
        return head + b"".join([*fixed, *records[-1:]])

    def edit(self, record: bytes, op: FieldOp, rng: random.Random) -> bytes:
        body, ending = split_terminator(record)
        parts = tokens(body)
        places = [i for i in range(0, len(parts), 2) if parts[i]]
        if not places:
            return edit_token(op if op != "delete" else "alter", body, rng) + ending
        numbers = [i for i in places if is_number(parts[i])] if op == "number" else []
        at = rng.choice(numbers or places)
        if op == "delete":
            # The token and the space before it (after it, for the first token) go.
            start = at - 1 if at > 0 else at
            del parts[start : start + 2]
        else:
            parts[at] = edit_token(op, parts[at], rng)
        return b"".join(parts) + ending

    def twin_edit(
        self, record: bytes, rng: random.Random, records: Sequence[bytes], keep: frozenset[bytes]
    ) -> bytes:
        body, ending = split_terminator(record)
        if has_digits(body):
            return redraw_digits(body, rng) + ending
        parts = tokens(body)
        words = [i for i in range(0, len(parts), 2) if _lendable(parts[i], keep)]
        if not words:
            return record
        # A word of another line in place of one of this line's: a prose reader meets words of
        # the same kind and length spread, in new lines.
        donor = tokens(split_terminator(rng.choice(records))[0])
        given = [t for t in donor[::2] if _lendable(t, keep)]
        if given:
            parts[rng.choice(words)] = rng.choice(given)
        return b"".join(parts) + ending


def _lendable(token: bytes, keep: frozenset[bytes]) -> bool:
    """A word that may be given or taken: not one the program spells (a keyword moved to another
    line changes what a parser does there)."""
    return bool(_WORD.match(token)) and token.lower() not in keep
