"""Find the line of a key in TOML text, so a schema error can name where to look.

tomllib reports lines for syntax errors only; a value of the wrong type or an unknown key is
found by walking table headers (`[a.b]`, `[[a]]`) and `key =` lines. Inline tables and dotted
keys fall back to the nearest enclosing table's line, which is still the right place to look.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)\s*=""")


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'":
        return name[1:-1]
    return name


def _header_paths(lines: Sequence[str]) -> list[tuple[int, tuple[str | int, ...]]]:
    """Each table header with its full path; array-of-tables entries get their index."""
    counts: dict[tuple[str, ...], int] = {}
    found: list[tuple[int, tuple[str | int, ...]]] = []
    for number, line in enumerate(lines, start=1):
        match = _HEADER.match(line)
        if not match:
            continue
        names = tuple(_unquote(part) for part in match.group(2).split("."))
        path: tuple[str | int, ...] = names
        if match.group(1) == "[[":
            index = counts.get(names, 0)
            counts[names] = index + 1
            path = (*names, index)
        found.append((number, path))
    return found


def _key_line(lines: Sequence[str], start: int, end: int, key: str) -> int | None:
    for number in range(start, end):
        match = _KEY.match(lines[number - 1])
        if match and _unquote(match.group(1)) == key:
            return number
    return None


def locate(text: str, loc: Sequence[str | int]) -> int | None:
    """The 1-based line that best matches a schema location such as ('workloads', 1, 'tier')."""
    lines = text.splitlines()
    headers: list[tuple[int, tuple[str | int, ...]]] = [(0, ()), *_header_paths(lines)]
    best: int | None = None
    best_len = -1
    for index, (start, path) in enumerate(headers):
        if tuple(loc[: len(path)]) != path or len(path) <= best_len:
            continue
        end = headers[index + 1][0] if index + 1 < len(headers) else len(lines) + 1
        rest = loc[len(path) :]
        line = start if start else None
        if rest and isinstance(rest[0], str):
            line = _key_line(lines, start + 1, end, rest[0]) or line
        if line is not None or not path:
            best, best_len = line, len(path)
    return best
