"""Whether each hunk landed in the definition its header names.

A hunk header may end with a function context (`@@ -10,7 +10,8 @@ def parse_line(`); when it
names a Python `def`/`class` or a Go `func`/`type`, the hunk is checked after applying: the
named identifier must be a definition enclosing the line the hunk starts at or one of the lines
it added, or the nearest definition above the hunk (what `git diff` and `diff -p` write when the
context begins on a `def` line: the previous one, at any depth or at the margin). Anything else
means fuzz or an offset put the hunk somewhere its author did not mean, and it is refused.

Python files are read with `ast`, Go files with tree-sitter-go; other files, hunks without a
function context or whose context names no definition (`import os`), and Python files that no
longer parse (the build refuses those) are not checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from speedproof.go_syntax import parse as parse_go
from speedproof.ground.errors import PatchError
from speedproof.judge.worktree.hunks import FilePatch, Hunk, Landing, describe_move

_PYTHON_NAME = re.compile(r"^\s*(?:async\s+def|def|class)\s+([^\W\d]\w*)")
_GO_NAME = re.compile(r"^\s*(?:func\s*(?:\([^)]*\)\s*)?|type\s+)([^\W\d]\w*)")
_LANGUAGES = {".py": "python", ".pyi": "python", ".go": "go"}
_PYTHON_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Definition:
    """A named definition: its `def`/`class`/`func`/`type` line, its span (decorators
    included), and whether it starts at the margin (what git's default context line needs)."""

    name: str
    header: int
    start: int
    end: int
    margin: bool


@dataclass(frozen=True)
class _Placed:
    """One named hunk as it landed: the line it starts at, the lines it added, how it moved."""

    path: str
    hunk: Hunk
    name: str
    first: int
    added: tuple[int, ...]
    how: str


def check_landings(
    worktree: Path, files: Sequence[FilePatch], landings: Sequence[Landing], tool: str
) -> None:
    """Raise PatchError for the first named hunk that landed outside the definition it names."""
    moved = {(landing.file, landing.hunk): landing for landing in landings}
    for index, patch in enumerate(files):
        language = _language(patch.path)
        named = [
            (hunk, name)
            for hunk in patch.hunks
            if (name := _named(hunk.context, language)) is not None
        ]
        if not named or patch.path is None:
            continue
        text = _read(worktree, patch.path)
        definitions = None if text is None else _definitions(text, language)
        if text is None or definitions is None:
            continue
        lines = text.split("\n")
        for hunk, name in named:
            landing = moved.get((index, hunk.number))
            placed = _place(patch.path, hunk, name, landing, lines, tool)
            if placed is not None:
                _check(placed, definitions, tool)


def _language(path: str | None) -> str | None:
    return None if path is None else _LANGUAGES.get(Path(path).suffix)


def _named(context: str, language: str | None) -> str | None:
    """The identifier a hunk's function context names, or None."""
    pattern = {"python": _PYTHON_NAME, "go": _GO_NAME}.get(language or "")
    match = pattern.match(context) if pattern is not None else None
    return match.group(1) if match else None


def _read(worktree: Path, path: str) -> str | None:
    """The patched file's text; None for a file that is gone or leads out of the tree."""
    file = worktree / path
    if file.is_symlink() or not file.is_file():
        return None
    if not file.resolve().is_relative_to(worktree.resolve()):
        return None
    return file.read_bytes().decode("utf-8", "surrogateescape")


def _place(
    path: str, hunk: Hunk, name: str, landing: Landing | None, lines: list[str], tool: str
) -> _Placed | None:
    """Where the hunk's new side starts in the new file, after checking its added lines are
    there; None for a hunk with no new side (nothing landed)."""
    if not hunk.lines:
        return None
    first = landing.at if landing is not None else hunk.new_start
    how = describe_move(landing)
    for index in hunk.added:
        line = first + index
        if not 1 <= line <= len(lines) or lines[line - 1].rstrip("\r") != hunk.lines[index]:
            raise PatchError(
                f"{path}: hunk {hunk.number} names {name}, but line {line} does not hold the "
                f"line it added where {tool} placed it ({how or 'as its header says'}), so "
                "where it landed cannot be checked"
            )
    added = tuple(first + index for index in hunk.added)
    return _Placed(path, hunk, name, first, added, how)


def _check(placed: _Placed, definitions: Sequence[Definition], tool: str) -> None:
    if _fits(placed.name, definitions, placed.first, placed.added):
        return
    line = placed.added[0] if placed.added else placed.first
    inner = _innermost(definitions, line)
    where = f"in {inner.name}" if inner is not None else "outside any function or type"
    how = f"with {placed.how}" if placed.how else "where its header says"
    raise PatchError(
        f"{placed.path}: hunk {placed.hunk.number} names {placed.name} but its lines landed "
        f"{where} (line {line}); {tool} placed it {how}"
    )


def _fits(name: str, definitions: Sequence[Definition], first: int, added: Sequence[int]) -> bool:
    for line in (first, *added):
        if any(d.name == name for d in _enclosing(definitions, line)):
            return True
    above = [d for d in definitions if d.header < first]
    for pool in (above, [d for d in above if d.margin]):
        if pool and max(pool, key=lambda d: d.header).name == name:
            return True
    return False


def _enclosing(definitions: Sequence[Definition], line: int) -> list[Definition]:
    return [d for d in definitions if d.start <= line <= d.end]


def _innermost(definitions: Sequence[Definition], line: int) -> Definition | None:
    around = _enclosing(definitions, line)
    return max(around, key=lambda d: (d.start, -d.end)) if around else None


def _definitions(text: str, language: str | None) -> tuple[Definition, ...] | None:
    if language == "python":
        return python_definitions(text)
    if language == "go":
        return go_definitions(text.encode("utf-8", "surrogateescape"))
    return None


def python_definitions(text: str) -> tuple[Definition, ...] | None:
    """Every def and class in a Python source; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return tuple(
        Definition(
            node.name,
            node.lineno,
            min([node.lineno, *(d.lineno for d in node.decorator_list)]),
            node.end_lineno or node.lineno,
            node.col_offset == 0,
        )
        for node in ast.walk(tree)
        if isinstance(node, _PYTHON_DEFINITIONS)
    )


def go_definitions(data: bytes) -> tuple[Definition, ...]:
    """Every func, method and type in a Go source, local types inside functions included
    (git's `golang` diff driver names them); tree-sitter reads broken sources too."""
    found: list[Definition] = []
    pending = [parse_go(data)]
    while pending:
        node = pending.pop()
        if node.type in ("function_declaration", "method_declaration"):
            found.extend(_go_definition(node, node))
        elif node.type == "type_declaration":
            specs = [spec for spec in node.children if spec.type == "type_spec"]
            # A lone `type T …` spans its keyword; a grouped one each spec alone.
            for spec in specs:
                found.extend(_go_definition(spec, node if len(specs) == 1 else spec))
        pending.extend(node.children)
    return tuple(found)


def _go_definition(named: Node, span: Node) -> list[Definition]:
    name = named.child_by_field_name("name")
    if name is None or name.text is None:
        return []
    first, last = span.start_point.row + 1, span.end_point.row + 1
    header = named.start_point.row + 1
    margin = span.start_point.column == 0
    return [Definition(name.text.decode("utf-8", "replace"), header, first, last, margin)]
