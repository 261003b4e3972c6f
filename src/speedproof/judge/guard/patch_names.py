"""A file name in a patch header as `patch -p1` reads it."""

from __future__ import annotations

from speedproof.judge.guard.protected import split_parts


def strip_first(name: str) -> str:
    """`name` as `-p1` reads it: without its first component ("" when nothing is left)."""
    parts = split_parts(name)
    return "/".join(parts[1:]) if len(parts) > 1 else ""
