"""Chat-format SFT rows from passing teacher turns, with focused copies and replay.

Order of operations, so nothing crosses the split boundary by weighting:
1. every teacher turn and every replayed row must name a train case id; a dev or frozen id (or a
   row without an id) refuses the whole build, naming the rows;
2. one row per turn: system prompt, the exact one-shot user message built from `model_view`,
   and the canonical SEARCH/REPLACE patch as the assistant message;
3. focused copies: `--focus family=N` adds N extra copies of each row of that family;
4. replay: rows of an earlier SFT file are drawn (seeded, with replacement when needed) until
   they make up `replay_ratio` of the final mixture;
5. the leakage audit runs on the result against dev and frozen splits; any leak fails the build.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speedproof.corpus.audit import Item, Leak, audit_items
from speedproof.corpus.errors import CorpusError, LeakageError, SplitBoundaryError
from speedproof.corpus.families import SEEN
from speedproof.corpus.jsonl import read_rows, sha256_file, write_rows
from speedproof.corpus.prompts import build_messages
from speedproof.functions.case import Case, model_view

_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class SftConfig:
    focus: Mapping[str, int] = field(default_factory=dict)
    replay_ratio: float = 0.0
    seed: int = 7


def turn_row(case: Case, patch: str) -> dict[str, Any]:
    messages = [m.model_dump() for m in build_messages(model_view(case))]
    messages.append({"role": "assistant", "content": patch})
    return {
        "messages": messages,
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "source": "teacher",
    }


def _check_boundary(rows: Sequence[Mapping[str, Any]], train_ids: set[str], what: str) -> None:
    bad = [str(row.get("case_id")) for row in rows if row.get("case_id") not in train_ids]
    if bad:
        shown = ", ".join(sorted(set(bad))[:8])
        raise SplitBoundaryError(
            f"{len(bad)} {what} row(s) name a case outside train (dev, frozen, unknown or "
            f"missing id), refused before any weighting: {shown}"
        )


def _focused(rows: list[dict[str, Any]], focus: Mapping[str, int]) -> list[dict[str, Any]]:
    extra = []
    for row in rows:
        for _ in range(focus.get(str(row["family"]), 0)):
            extra.append({**row, "source": "focus"})
    return extra


def _replayed(
    earlier: list[dict[str, Any]], base: int, ratio: float, rng: random.Random
) -> list[dict[str, Any]]:
    if ratio <= 0:
        return []
    if not 0 < ratio < 1:
        raise CorpusError(f"replay ratio must be in [0, 1), got {ratio}")
    if not earlier:
        raise CorpusError("a replay ratio was given but the replay file has no rows")
    wanted = round(ratio * base / (1 - ratio))
    order = list(earlier)
    rng.shuffle(order)
    picked = [order[i % len(order)] for i in range(wanted)]
    return [{**row, "source": "replay"} for row in picked]


def _reference(row: Mapping[str, Any]) -> str:
    for message in row.get("messages", []):
        if message.get("role") == "user":
            found = _FENCE.search(str(message.get("content", "")))
            if found:
                return found.group(1)
    raise CorpusError(f"SFT row of case {row.get('case_id')} holds no ```python fenced source")


def audit_rows(
    rows: Sequence[Mapping[str, Any]], splits: Mapping[str, Sequence[Case]]
) -> list[Leak]:
    """Leaks between SFT rows and the evaluation splits (and held-out families in the rows)."""
    items = [
        Item.of_source(str(r["case_id"]), str(r["family"]), str(r["template"]), _reference(r))
        for r in rows
    ]
    groups: dict[str, Sequence[Item]] = {"sft": items}
    for name in ("dev", "frozen_seen", "frozen_heldout"):
        groups[name] = [Item.of_case(c) for c in splits.get(name, [])]
    return audit_items(groups)


def build_sft(
    turns: Sequence[Mapping[str, Any]],
    splits: Mapping[str, Sequence[Case]],
    config: SftConfig,
    replay: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The shuffled SFT mixture; raises on a boundary violation or a leak."""
    train = {c.id: c for c in splits["train"]}
    _check_boundary(turns, set(train), "teacher")
    _check_boundary(replay, set(train), "replay")
    unknown = sorted(set(config.focus) - {f.name for f in SEEN})
    if unknown:
        raise CorpusError(f"--focus names families that are not seen families: {unknown}")
    base = [turn_row(train[str(t["case_id"])], str(t["patch"])) for t in turns]
    rng = random.Random(config.seed)
    rows = base + _focused(base, config.focus)
    rows += _replayed([dict(r) for r in replay], len(rows), config.replay_ratio, rng)
    leaks = audit_rows(rows, splits)
    if leaks:
        raise LeakageError("\n".join(leak.render() for leak in leaks))
    rng.shuffle(rows)
    return rows


def parse_focus(values: Sequence[str]) -> dict[str, int]:
    """`family=copies` pairs from the command line."""
    focus: dict[str, int] = {}
    for value in values:
        name, sep, count = value.partition("=")
        if not sep or not count.isdigit():
            raise CorpusError(f"--focus wants family=copies, got {value!r}")
        focus[name] = int(count)
    return focus


def write_sft(path: Path, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Write the rows and return a summary (counts by source and family, SHA-256)."""
    write_rows(path, rows)
    return {
        "file": str(path),
        "sha256": sha256_file(path),
        "rows": len(rows),
        "by_source": dict(sorted(Counter(str(r["source"]) for r in rows).items())),
        "by_family": dict(sorted(Counter(str(r["family"]) for r in rows).items())),
    }


def read_sft(path: Path) -> list[dict[str, Any]]:
    return read_rows(path)
