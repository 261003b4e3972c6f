"""The target's Python source: `ast` for the functions a profile credits (names and spans, read
from the file as Python reads it), libcst for their structure (the advisor's facts and the
proposer's rules).

The functions of a file are its top-level functions and methods (of classes at any depth of
class nesting). A nested function, lambda, comprehension or generator expression is credited to
the function that holds it: a proposer rewrites the function around it. A function's lines run
from its first decorator to its `end_lineno`, so its source is the whole definition.
"""

from __future__ import annotations

import ast
import functools
import textwrap
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

from speedproof.source.function import SourceFunction, lines_of

# Folders whose files are never the target's own code even under a source root (a virtual
# environment inside the target folder, say).
_NOT_OWN = frozenset({"site-packages", "dist-packages", "__pycache__"})

AstFunction = ast.FunctionDef | ast.AsyncFunctionDef


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


def _units(body: Sequence[ast.stmt], prefix: str) -> list[tuple[str, AstFunction]]:
    found: list[tuple[str, AstFunction]] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((f"{prefix}.{node.name}", node))
        elif isinstance(node, ast.ClassDef):
            found.extend(_units(node.body, f"{prefix}.{node.name}"))
    return found


def functions(path: Path, relative: str, module: str) -> list[SourceFunction]:
    """Every function of one file, in file order, named under `module`; an unreadable or
    broken file has none."""
    try:
        with tokenize.open(path) as handle:
            text = handle.read()
        tree = ast.parse(text, filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    found = []
    for name, node in _units(tree.body, module):
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        found.append(
            SourceFunction(name, relative, "python", lines_of(text, start, end), start, end)
        )
    return found


# -- libcst ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def module_of(text: str) -> cst.Module | None:
    """`text` parsed with libcst, or None when it does not parse. Kept for the few files a
    campaign's hot functions live in: the advisor and the proposer ask about each hot function
    of a file in turn. libcst nodes are immutable, so every reader shares one tree."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None


def function_alone(source: str) -> cst.Module | None:
    """A function's text shown alone, dedented so that a method parses too."""
    return module_of(textwrap.dedent(source))


@dataclass(frozen=True)
class Resolved:
    """A parsed module with the scope, parent and position of each node."""

    module: cst.Module
    scopes: dict[cst.CSTNode, object]
    parents: dict[cst.CSTNode, cst.CSTNode]
    positions: dict[cst.CSTNode, object]


@functools.lru_cache(maxsize=8)
def resolved(text: str) -> Resolved | None:
    """`text` parsed, with its scope, parent and position metadata; None when it does not parse.
    Cached too: resolving one 100-line file took 0.3 to 0.9 s on a 2-core machine. Nothing
    changes a parsed tree and the readers only read the metadata, so they share it."""
    module = module_of(text)
    if module is None:
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = dict(wrapper.resolve(ScopeProvider))
    parents = dict(wrapper.resolve(ParentNodeProvider))
    positions = dict(wrapper.resolve(PositionProvider))
    return Resolved(module, scopes, parents, positions)  # type: ignore[arg-type]


class _Paths(cst.CSTVisitor):
    """Every function definition with its path of enclosing class and function names."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.found: list[tuple[tuple[str, ...], cst.FunctionDef]] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)
        self.found.append((tuple(self.stack), node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()


def locate(
    module: cst.Module, function: SourceFunction, positions: dict[cst.CSTNode, object] | None
) -> cst.FunctionDef | None:
    """The definition of `function` in `module`: the only one whose path of class and function
    names ends its qualified name, or, with the whole file's `positions`, the one starting in its
    span."""
    visitor = _Paths()
    module.visit(visitor)
    parts = function.name_parts
    named = [
        node
        for path, node in visitor.found
        if path[-1] == function.bare_name and parts[-len(path) :] == path
    ]
    if len(named) <= 1 or positions is None:
        return named[0] if len(named) == 1 else None
    for node in named:
        line = positions[node].start.line  # type: ignore[attr-defined]
        if function.start_line <= line <= function.end_line:
            return node
    return None


def first_function(module: cst.Module) -> cst.FunctionDef | None:
    return next((s for s in module.body if isinstance(s, cst.FunctionDef)), None)


def classes(body: Sequence[cst.CSTNode]) -> Iterator[cst.ClassDef]:
    """Every class of a body, nested classes after the class that holds them."""
    for statement in body:
        if isinstance(statement, cst.ClassDef):
            yield statement
            yield from classes(statement.body.body)


def class_of_method(module: cst.Module, name: str) -> cst.ClassDef | None:
    """The first class (in file order, nested ones after their holder) with a method `name`."""
    for klass in classes(module.body):
        if any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in klass.body.body):
            return klass
    return None
