"""Field-level edits of one token's bytes, and the gentle redraw a mutated twin uses.

Variants ask a program about what its workloads never hold: numbers at their edges (0, -1, a
value past 64 bits), a token in another case, bytes that are not text (invalid UTF-8, NUL), a
token longer than any line a workload has, a carriage return. Every edit changes the token: an
edit that would leave it as it was (the case of a number) falls back to scrambling it.
"""

from __future__ import annotations

import random
import re
from typing import Literal

FieldOp = Literal["alter", "delete", "number", "case", "odd"]
FIELD_OPS: tuple[FieldOp, ...] = ("alter", "number", "case", "odd", "delete")

_NUMBER = re.compile(rb"^[-+]?\d+(\.\d+)?$")
_DIGITS = re.compile(rb"\d+")
# Edge values of a number: zero, one, minus one, past a signed 64-bit integer, and their
# fractional kin when the field held a fraction.
INT_EDGES = (b"0", b"1", b"-1", b"18446744073709551616", b"-9223372036854775809")
FLOAT_EDGES = (b"0.0", b"-0.5", b"1e308", b"-1.0", b"0.000001")
# A token this long is longer than any line of the bundled workloads (their longest is ~400
# bytes) and than a 4 KiB read buffer, where hand-written scanners tend to cut.
LONG_TOKEN = 5000
# One odd edit in this many makes a long token: more would make a variant of 2,000 records
# megabytes long, and one long token in a record is as good a probe as many.
LONG_ODDS = 1 / 40
_ODD = (b"\xff\xfe", b"\x00", b"\r", b"\xc3")
_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGIT_CHARS = b"0123456789"


def is_number(token: bytes) -> bool:
    return bool(_NUMBER.match(token))


def scramble(token: bytes, rng: random.Random) -> bytes:
    """Every letter and digit replaced by a random one of its class; other bytes kept. A token
    with none of them gets a random letter appended, so the result always differs."""
    out = bytearray(token)
    for index, byte in enumerate(token):
        for alphabet in (_LOWER, _UPPER, _DIGIT_CHARS):
            if byte in alphabet:
                out[index] = rng.choice(alphabet)
    if bytes(out) == token:
        out.append(rng.choice(_LOWER))
    return bytes(out)


def edge_number(token: bytes, rng: random.Random) -> bytes:
    """An edge value in place of `token`, a fraction's for a fraction; never `token` itself."""
    edges = FLOAT_EDGES if b"." in token else INT_EDGES
    return rng.choice([edge for edge in edges if edge != token])


def recase(token: bytes, rng: random.Random) -> bytes:
    """`token` in upper, lower or swapped case, whichever changes it; scrambled if none does."""
    for change in rng.sample([bytes.upper, bytes.lower, bytes.swapcase], 3):
        if change(token) != token:
            return change(token)
    return scramble(token, rng)


def oddity(token: bytes, rng: random.Random) -> bytes:
    """`token` with bytes no workload holds: not UTF-8, NUL, a carriage return, or very long."""
    if rng.random() < LONG_ODDS:
        return (token or b"x") * (LONG_TOKEN // max(1, len(token)) + 1)
    at = rng.randint(0, len(token))
    return token[:at] + rng.choice(_ODD) + token[at:]


def edit_token(op: FieldOp, token: bytes, rng: random.Random) -> bytes:
    """`token` changed by `op` ("delete" is the caller's: it removes the field itself)."""
    if op == "number":
        return edge_number(token, rng)
    if op == "case":
        return recase(token, rng)
    if op == "odd":
        return oddity(token, rng)
    return scramble(token, rng)


def redraw_digits(token: bytes, rng: random.Random) -> bytes:
    """Each digit redrawn between 0 and itself, a run that was not all zeros never becoming all
    zeros: an hour, a day, a minute, a time-zone offset or a status stays one a parser takes
    (no digit grows), with a new value at the same width."""

    uniform = rng.random

    def redraw(match: re.Match[bytes]) -> bytes:
        text = match.group()
        # One C call a digit: `randint` costs five Python calls, and a twin of an 8,420-line log
        # redraws 580,000 digits (0.98 s of its 1.26 s under a profiler).
        drawn = bytes([48 + int(uniform() * (byte - 47)) for byte in text])
        return text if not drawn.strip(b"0") and text.strip(b"0") else drawn

    return _DIGITS.sub(redraw, token)


def has_digits(token: bytes) -> bool:
    return _DIGITS.search(token) is not None
