"""What every mutator's format provides: records out of bytes and back, and edits of one record."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

from speedproof.judge.inputs.mutate.fields import FieldOp

R = TypeVar("R")


class Format(Protocol[R]):
    """One kind of input as records of type R (a line, a CSV row, a JSON value, a chunk)."""

    def split(self, content: bytes) -> tuple[bytes, list[R]]:
        """(a head kept as it is, such as a CSV header; the records in order)."""
        ...

    def join(self, head: bytes, records: Sequence[R]) -> bytes: ...

    def edit(self, record: R, op: FieldOp, rng: random.Random) -> R:
        """`record` with one field changed by `op`; it never comes back unchanged."""
        ...

    def twin_edit(
        self, record: R, rng: random.Random, records: Sequence[R], keep: frozenset[bytes]
    ) -> R:
        """`record` changed as a mutated twin changes it: new values that a reader of the
        original takes as it took the old ones (`records` lends values of other records; a
        word in `keep`, the program's own, in lower case, is neither given nor taken)."""
        ...
