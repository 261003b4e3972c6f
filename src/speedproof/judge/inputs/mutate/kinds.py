"""Which mutator a file gets: named by the manifest, else from its suffix, else from its bytes."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Literal, get_args

Kind = Literal["lines", "csv", "json", "jsonl", "binary", "none"]
KINDS: tuple[str, ...] = get_args(Kind)

_SUFFIXES: dict[str, Kind] = {
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
# Bytes looked at when sniffing: enough for a few hundred log lines, cheap on a large file.
SNIFF_BYTES = 64 * 1024
# Lines of a file sniffed as JSON lines that must each parse.
_SNIFF_LINES = 20


def detect_kind(name: str, content: bytes) -> Kind:
    """The kind of `content` (the file `name`): by suffix first, then by sniffing its bytes."""
    by_suffix = _SUFFIXES.get(PurePosixPath(name).suffix.lower())
    if by_suffix is not None:
        return by_suffix
    head = content[:SNIFF_BYTES]
    if b"\x00" in head or not _mostly_text(head):
        return "binary"
    if content.lstrip()[:1] in (b"{", b"[") and _parses(content):
        return "json"
    lines = [line for line in head.splitlines()[:_SNIFF_LINES] if line.strip()]
    if len(lines) > 1 and all(_parses(line) and line.lstrip()[:1] == b"{" for line in lines):
        return "jsonl"
    return "lines"


def _mostly_text(head: bytes) -> bool:
    """UTF-8 text, allowing a character cut at the sniffing limit."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3
    return True


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True
