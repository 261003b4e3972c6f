"""Variants and mutated twins out of a file's bytes, for any kind of input.

A variant is built from a random slice of the file (`SLICE_RECORDS`), so that each run is a
fraction of a workload's: one field-level edit in most records (`EDITED_SHARE`), so that a table
of answers kept per line or per field misses most of them, and one record-level change. The
edits of the variants of one input take turns (`FIELD_OPS`, five, and `RECORD_OPS`, four), so
20 variants try every pair of a field edit and a record change once (the fifth variant has no
records at all instead).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from speedproof.judge.inputs.mutate.binary import Binary
from speedproof.judge.inputs.mutate.fields import FIELD_OPS, FieldOp
from speedproof.judge.inputs.mutate.format import Format
from speedproof.judge.inputs.mutate.kinds import Kind
from speedproof.judge.inputs.mutate.lines import Lines
from speedproof.judge.inputs.mutate.rename import renamed
from speedproof.judge.inputs.mutate.structured import Document, JsonLines
from speedproof.judge.inputs.mutate.table import Table

RecordOp = Literal["drop", "duplicate", "shuffle", "truncate", "empty"]
RECORD_OPS: tuple[RecordOp, ...] = ("duplicate", "drop", "shuffle", "truncate")
# The variant of this index has no records at all (a CSV keeps its header): one is enough, as
# every empty variant of an input is the same input.
EMPTY_INDEX = 4
# Records a variant is cut from: enough for every kind of line a log holds to turn up, few
# enough that a run of logstat or textstat takes milliseconds (a sandboxed run of logstat on
# 600 lines: 37 ms of CPU, 27 of them the sandbox's and the launcher's).
SLICE_RECORDS = (150, 600)
# Records of an argv variant: the input only has to be read; the option is what is asked.
SMALL_RECORDS = 50
# The share of a variant's records that get a field edit, drawn per variant.
EDITED_SHARE = (0.6, 0.95)
# The share of a mutated twin's records that change.
TWIN_SHARE = 0.9

_OP_WORDS: dict[FieldOp, str] = {
    "alter": "a field altered",
    "number": "a number set to an edge value (0, 1, -1, past 64 bits)",
    "case": "a field's case changed",
    "odd": "odd bytes in a field (not UTF-8, NUL, CR, 5,000 bytes long)",
    "delete": "a field deleted",
}


@dataclass(frozen=True)
class Variant:
    content: bytes
    # What was done, in words: "a field altered in 80 % of 1,204 records (3-1206 of 2,900),
    # 3 records duplicated".
    description: str


def _format(kind: Kind) -> Format[Any]:
    makers: dict[str, Callable[[], Format[Any]]] = {
        "lines": Lines,
        "csv": Table,
        "json": Document,
        "jsonl": JsonLines,
        "binary": Binary,
    }
    if kind not in makers:
        raise ValueError(f"no mutator for inputs of kind {kind!r}")
    return makers[kind]()


def _slice(records: Sequence[Any], rng: random.Random, bounds: tuple[int, int]) -> tuple[int, int]:
    """(first, count) of a random run of records."""
    count = min(len(records), rng.randint(*bounds))
    return rng.randint(0, len(records) - count), count


def _record_change(
    op: RecordOp, records: list[Any], rng: random.Random
) -> tuple[list[Any], str, int]:
    """(records, words, bytes to cut off the end once joined)."""
    some = max(1, len(records) // 20)
    if not records or op == "empty":
        return [], "no records at all", 0
    if op == "drop":
        gone = set(rng.sample(range(len(records)), min(some, len(records) - 1)))
        return [r for i, r in enumerate(records) if i not in gone], f"{len(gone)} dropped", 0
    if op == "duplicate":
        for _ in range(some):
            at = rng.randrange(len(records))
            records.insert(rng.randint(at, len(records)), records[at])
        return records, f"{some} duplicated", 0
    if op == "shuffle":
        rng.shuffle(records)
        return records, "shuffled", 0
    return records, "the last one cut short", rng.randint(1, 40)


def make_variant(content: bytes, kind: Kind, rng: random.Random, index: int) -> Variant:
    """The `index`-th variant of `content`: a slice of it, edited (see the module's words)."""
    form = _format(kind)
    head, records = form.split(content)
    first, count = _slice(records, rng, SLICE_RECORDS)
    chosen = list(records[first : first + count])
    op = FIELD_OPS[index % len(FIELD_OPS)]
    share = rng.uniform(*EDITED_SHARE)
    edited = rng.sample(range(len(chosen)), round(share * len(chosen)))
    for at in edited:
        chosen[at] = form.edit(chosen[at], op, rng)
    record_op: RecordOp = "empty" if index == EMPTY_INDEX else RECORD_OPS[index % len(RECORD_OPS)]
    changed, change_words, cut = _record_change(record_op, chosen, rng)
    data = form.join(head, changed)
    if cut and changed:
        data = data[: max(len(head) + 1, len(data) - cut)]
    pct = round(100 * len(edited) / max(1, count))
    words = (
        f"{_OP_WORDS[op]} in {pct} % of {count:,} records ({first + 1}-{first + count} of "
        f"{len(records):,}); records: {change_words}"
    )
    return Variant(data, words)


def small_slice(content: bytes, kind: Kind, rng: random.Random) -> Variant:
    """A few records of `content` as they are: the input of an argv variant."""
    form = _format(kind)
    head, records = form.split(content)
    first, count = _slice(records, rng, (SMALL_RECORDS, SMALL_RECORDS))
    words = f"records {first + 1}-{first + count} of {len(records):,} unchanged"
    return Variant(form.join(head, records[first : first + count]), words)


def mutated_twin(
    content: bytes, kind: Kind, rng: random.Random, keep: frozenset[bytes] = frozenset()
) -> bytes:
    """`content` with every record kept and `TWIN_SHARE` of them changed gently (digits redrawn
    no larger, words lent by other records), then every word outside the format spelt anew
    (`rename`); a binary file, or kind "none", comes back as it is. The first record of a
    line-oriented file stays, as a header would, and so does a CSV's header. Words in `keep` (the
    program's own, in lower case: `inputs/program_words.py`) are neither moved nor spelt anew."""
    if kind in ("none", "binary"):
        return content
    form = _format(kind)
    head, records = form.split(content)
    if not records:
        return content
    keep_first = 1 if kind == "lines" else 0
    out = list(records)
    for at in range(keep_first, len(out)):
        if rng.random() < TWIN_SHARE:
            out[at] = form.twin_edit(out[at], rng, records, keep)
    kept = form.join(head, out[:keep_first])
    return renamed(form.join(head, out), rng, head=len(kept), keep=keep)
