"""The target's Python definitions: which function holds a line, its qualified name and its text.

The units are top-level functions and methods (of classes at any depth of class nesting), read
with `ast` from the file as it is in the baseline tree. A nested function, lambda, comprehension
or generator expression is credited to the unit that holds it: the profiler sees it as a code
object of its own, but a proposer rewrites the function around it. A unit's lines run from its
first decorator to its `end_lineno`, so its source is the whole definition.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Sequence
from pathlib import Path

from speedproof.discovery.hot import Definition

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
# Folders whose files are never the target's own code even under a source root (a virtual
# environment inside the target folder, say).
_NOT_OWN = frozenset({"site-packages", "dist-packages", "__pycache__"})

Function = ast.FunctionDef | ast.AsyncFunctionDef


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only, as `ast` counts them."""
    return _LINE.findall(text)


def module_name(path: Path, roots: Sequence[Path]) -> str | None:
    """The dotted module a file is imported as from the first source root holding it."""
    for root in roots:
        if not path.is_relative_to(root):
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if _NOT_OWN.intersection(parts):
            return None
        if parts and parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts) if parts else path.stem
    return None


def _units(body: Sequence[ast.stmt], prefix: str) -> list[tuple[str, Function]]:
    found: list[tuple[str, Function]] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((f"{prefix}.{node.name}", node))
        elif isinstance(node, ast.ClassDef):
            found.extend(_units(node.body, f"{prefix}.{node.name}"))
    return found


def definitions(path: Path, relative: str, module: str) -> list[Definition]:
    """Every unit of one file, in file order; an unreadable file has none."""
    try:
        with tokenize.open(path) as handle:
            text = handle.read()
        tree = ast.parse(text, filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    lines = split_lines(text)
    found = []
    for name, node in _units(tree.body, module):
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        source = "".join(lines[start - 1 : end])
        found.append(Definition(name, relative, start, end, source))
    return found


class PythonSources:
    """The units of the target's files, read once each, found by file and line."""

    def __init__(self, target: Path, roots: Sequence[Path]) -> None:
        self.target = target
        self.roots = tuple(roots)
        self._files: dict[Path, list[Definition] | None] = {}

    def _units_of(self, path: Path) -> list[Definition] | None:
        if path not in self._files:
            module = module_name(path, self.roots)
            own = module is not None and path.is_relative_to(self.target) and path.is_file()
            if module is None or not own:
                self._files[path] = None
            else:
                relative = path.relative_to(self.target).as_posix()
                self._files[path] = definitions(path, relative, module)
        return self._files[path]

    def is_own(self, filename: str) -> bool:
        """Whether a code object's file is the target's: under a source root and the target."""
        return self._units_of(_absolute(filename)) is not None

    def unit_at(self, filename: str, line: int) -> Definition | None:
        """The unit holding `line` of `filename`, or None (module body, class body, not own)."""
        units = self._units_of(_absolute(filename)) or []
        return next((u for u in units if u.start_line <= line <= u.end_line), None)


def _absolute(filename: str) -> Path:
    # Built-ins are reported with the file "~"; frozen modules with "<frozen ...>".
    if not filename.startswith("/"):
        return Path("/nonexistent") / filename.replace("/", "_")
    return Path(filename).resolve()
