"""Binary files: a record is a 256-byte chunk, a field a byte of it.

Nothing about the format is known, so a variant overwrites, inserts or deletes a few bytes of
most chunks (edge bytes 0x00, 0x7f, 0x80, 0xff among them) and a twin keeps the bytes: a changed
byte of an unknown format may turn the whole file into one the program refuses, and a twin must
keep the program's work.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from speedproof.judge.inputs.mutate.fields import FieldOp

CHUNK = 256
_EDGE_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)


class Binary:
    def split(self, content: bytes) -> tuple[bytes, list[bytes]]:
        return b"", [content[i : i + CHUNK] for i in range(0, len(content), CHUNK)]

    def join(self, head: bytes, records: Sequence[bytes]) -> bytes:
        return head + b"".join(records)

    def edit(self, record: bytes, op: FieldOp, rng: random.Random) -> bytes:
        if not record:
            return bytes([rng.choice(_EDGE_BYTES)])
        data = bytearray(record)
        at = rng.randrange(len(data))
        if op == "delete":
            del data[at : at + rng.randint(1, 4)]
        elif op == "odd":
            data[at:at] = bytes(rng.choice(_EDGE_BYTES) for _ in range(rng.randint(1, 8)))
        elif op == "number":
            data[at] = rng.choice([b for b in _EDGE_BYTES if b != data[at]])
        elif op == "case":
            data[at] ^= 0x20
        else:
            data[at] = (data[at] + rng.randint(1, 255)) % 256
        return bytes(data)

    def twin_edit(
        self, record: bytes, rng: random.Random, records: Sequence[bytes], keep: frozenset[bytes]
    ) -> bytes:
        return record
