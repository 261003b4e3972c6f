"""Consistent renaming: every word of an input that is not part of its format gets a new spelling.

A mutated twin that only redraws digits leaves most of a log's words as they were: in the
logstat example 36 % of the request targets hold no digit, so a table kept per request target
(target → endpoint, written into the repository) still answered more than half of a twin's
lines, and the win it bought carried over. A per-word or per-line table misses a twin only when
the words themselves are new.

So each word (a run of two or more ASCII letters) found in fewer than `FORMAT_SHARE` of the
records gets a fresh spelling of the same length and the same case, letter by letter, drawn from
the judgement's seed; every occurrence of the word gets the same one. Words in half the records
or more are the format's own (a month name in a one-day log, `GET`, `HTTP`, a CSV's repeated
labels) and stay, so a parser still reads every record. The records keep their lengths, their
repeats and their distinct counts, so the work an honest program does on the twin is about the
work it does on the original, while nothing a candidate could have stored names them.
"""

from __future__ import annotations

import random
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence

_WORD = re.compile(rb"[A-Za-z]{2,}")
# A word in at least this share of the records belongs to the format and keeps its spelling.
FORMAT_SHARE = 0.5
# Draws of a new spelling before giving up on one that collides with a word of the input; with
# 26**2 spellings for the shortest words, a collision after this many draws is all but
# impossible, and a word that keeps its spelling is one of millions.
_DRAWS = 100
_LOWER = string.ascii_lowercase.encode()
_UPPER = string.ascii_uppercase.encode()


def _respell(word: bytes, rng: random.Random) -> bytes:
    """`word` with each letter redrawn in its own case."""
    return bytes(rng.choice(_UPPER if 65 <= c <= 90 else _LOWER) for c in word)


def renaming(
    records: Sequence[bytes], rng: random.Random, keep: frozenset[bytes] = frozenset()
) -> dict[bytes, bytes]:
    """Old spelling → new spelling for every word of `records` outside the format: neither in
    half the records nor, in lower case, in `keep` (the program's own words).

    A new spelling never equals a word of the input or another new spelling, so two words never
    merge and no renamed word reads as a format word."""
    seen: Counter[bytes] = Counter()
    for record in records:
        seen.update(set(_WORD.findall(record)))
    limit = FORMAT_SHARE * len(records)
    taken = set(seen)
    mapping: dict[bytes, bytes] = {}
    # Sorted, so that one seed gives one renaming whatever order the counter keeps.
    for word in sorted(w for w, n in seen.items() if n < limit and w.lower() not in keep):
        for _ in range(_DRAWS):
            spelling = _respell(word, rng)
            if spelling not in taken:
                break
        else:
            continue
        taken.add(spelling)
        mapping[word] = spelling
    return mapping


def rename(record: bytes, mapping: Mapping[bytes, bytes]) -> bytes:
    """`record` with every word in `mapping` spelt anew."""
    return _WORD.sub(lambda m: mapping.get(m.group(), m.group()), record)


def renamed(
    content: bytes, rng: random.Random, *, head: int = 0, keep: frozenset[bytes] = frozenset()
) -> bytes:
    """`content` with its lines after the first `head` bytes renamed (a CSV's header stays),
    the words in `keep` left as they are."""
    head_bytes, body = content[:head], content[head:]
    lines = body.splitlines(keepends=True)
    mapping = renaming(lines, rng, keep)
    return head_bytes + b"".join(rename(line, mapping) for line in lines)
