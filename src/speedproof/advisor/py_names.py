"""The names a piece of Python binds, mutates and reads, read with libcst: what decides whether an
expression is invariant in a loop (`pyfacts.PyFacts.invariant`)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

GROW_METHODS = frozenset({"append", "extend", "insert", "add", "update", "appendleft"})
MUTATING = GROW_METHODS | {"pop", "remove", "clear", "sort", "reverse", "discard", "popleft"}


class Assigned(cst.CSTVisitor):
    """Names bound or mutated under a node."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def _targets(self, node: cst.CSTNode) -> None:
        for name in target_names(node):
            self.names.add(name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATING:
            self._targets(func.value)


class Reads(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.calls = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1


def target_names(node: cst.CSTNode) -> Iterator[str]:
    """The base names a target expression binds or writes through (x, x[i], x.a, (a, b))."""
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, cst.Attribute | cst.Subscript):
        yield from target_names(node.value)
    elif isinstance(node, cst.Tuple | cst.List):
        for element in node.elements:
            yield from target_names(element.value)
    elif isinstance(node, cst.StarredElement):
        yield from target_names(node.value)
