"""Single-change mutants of a trusted reference, to measure whether a case's inputs can tell.

A case is only as strong as its inputs: if a wrong candidate agrees with the reference on every
verifier input, the verifier passes it. Small syntactic mutants of the reference (a `<` turned
into `<=`, a `% m` normalisation dropped, a statement removed) are cheap stand-ins for the
plausible mistakes of a model, so the share of them the inputs reject (`adequacy.py`) says how
well a case's inputs guard it.

Every mutant is the reference with exactly one change, rendered by `ast.unparse`, different from
the unparsed original and unique by source. The `def` line (name and arguments) never changes.
Ids read `operator@line:ordinal`, the ordinal counting that operator's mutants on that line in
generation order, so the same reference always yields the same ids.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """One changed copy of the reference: `id` is `operator@line:ordinal`."""

    id: str
    operator: str
    line: int
    source: str


@dataclass(frozen=True)
class Site:
    """A node of the function body and where it hangs: `parent.field` or `parent.field[index]`."""

    parent: ast.AST
    field: str
    index: int | None
    node: ast.AST


Operator = Callable[[Site], list[ast.AST]]
"""Given a site, the replacement nodes for it (fresh objects), one per mutant."""

# --- the operators ------------------------------------------------------------------------------

_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}

_ARITH_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mod,
    ast.Mod: ast.FloorDiv,
    ast.BitXor: ast.BitOr,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}

# Statements whose `body` and `orelse` lists are "a function body, loop body or if body".
_BLOCKS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.AsyncFor, ast.While, ast.If)


def _compare_swap(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.Compare):
        return []
    out: list[ast.AST] = []
    for position, op in enumerate(node.ops):
        for swapped in _COMPARE_SWAPS.get(type(op), ()):
            new = copy.deepcopy(node)
            new.ops[position] = swapped()
            out.append(new)
    return out


def _arith_swap(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.BinOp | ast.AugAssign):
        return []
    swapped = _ARITH_SWAPS.get(type(node.op))
    if swapped is None:
        return []
    new = copy.deepcopy(node)
    new.op = swapped()
    return [new]


def _operand_drop(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.BinOp):
        return []
    return [copy.deepcopy(node.left), copy.deepcopy(node.right)]


def _int_literal(value: int) -> ast.expr:
    # A negative result as `-(n)` rather than Constant(-n): unparse then keeps `(-1) ** 2` apart
    # from `-1 ** 2`, which is -(1 ** 2).
    if value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
    return ast.Constant(value=value)


def _constant(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.Constant) or type(node.value) is not int:
        return []
    return [_int_literal(node.value + 1), _int_literal(node.value - 1)]


def _is_docstring(site: Site) -> bool:
    node = site.node
    return (
        site.index == 0
        and isinstance(site.parent, ast.FunctionDef | ast.AsyncFunctionDef)
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _statement_drop(site: Site) -> list[ast.AST]:
    if not isinstance(site.node, ast.stmt) or isinstance(site.node, ast.Pass):
        return []
    if not isinstance(site.parent, _BLOCKS) or site.field not in ("body", "orelse"):
        return []
    if _is_docstring(site):
        return []
    return [ast.Pass()]


def _shifted(bound: ast.expr, op: ast.operator) -> ast.expr:
    return ast.BinOp(left=copy.deepcopy(bound), op=op, right=ast.Constant(value=1))


def _slice_bound(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.Slice):
        return []
    out: list[ast.AST] = []
    for name in ("lower", "upper"):
        bound = getattr(node, name)
        if bound is None:
            continue
        for replacement in (_shifted(bound, ast.Add()), _shifted(bound, ast.Sub()), None):
            new = copy.deepcopy(node)
            setattr(new, name, replacement)
            out.append(new)
    return out


def _bool_swap(site: Site) -> list[ast.AST]:
    node = site.node
    if isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return [new]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [copy.deepcopy(node.operand)]
    return []


def _condition_negate(site: Site) -> list[ast.AST]:
    node = site.node
    if not isinstance(node, ast.If | ast.While | ast.IfExp):
        return []
    new = copy.deepcopy(node)
    new.test = ast.UnaryOp(op=ast.Not(), operand=new.test)
    return [new]


OPERATORS: dict[str, Operator] = {
    "compare-swap": _compare_swap,
    "arith-swap": _arith_swap,
    "operand-drop": _operand_drop,
    "constant": _constant,
    "statement-drop": _statement_drop,
    "slice-bound": _slice_bound,
    "bool-swap": _bool_swap,
    "condition-negate": _condition_negate,
}
"""Operator name to operator, in the order mutants are generated."""

# --- the engine ---------------------------------------------------------------------------------


def _children(node: ast.AST) -> Iterator[Site]:
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            yield Site(node, name, None, value)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield Site(node, name, index, item)


def _sites(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Site]:
    """Every node under the function's body in source (depth-first, pre-order) order."""
    out: list[Site] = []
    stack = [Site(function, "body", i, s) for i, s in enumerate(function.body)][::-1]
    while stack:
        site = stack.pop()
        out.append(site)
        stack.extend(list(_children(site.node))[::-1])
    return out


def _put(site: Site, node: ast.AST) -> None:
    if site.index is None:
        setattr(site.parent, site.field, node)
    else:
        getattr(site.parent, site.field)[site.index] = node


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    raise ValueError(f"no top-level function named {name!r}")


def _render(tree: ast.Module, site: Site, replacement: ast.AST) -> str | None:
    """The source with `site` replaced, or None when it does not parse back; `tree` is restored."""
    _put(site, replacement)
    try:
        text = ast.unparse(tree)
    finally:
        _put(site, site.node)
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def _line(site: Site) -> int:
    """The node's line in the original source (a Slice's parent line on old Pythons)."""
    line: int = getattr(site.node, "lineno", 0) or getattr(site.parent, "lineno", 0)
    return line


class _Collector:
    """Deduplicates by source and numbers each operator's mutants per line."""

    def __init__(self, original: str) -> None:
        self.seen = {original}
        self.ordinals: dict[tuple[str, int], int] = {}
        self.mutants: list[Mutant] = []

    def add(self, operator: str, line: int, text: str | None) -> None:
        if text is None or text in self.seen:
            return
        self.seen.add(text)
        ordinal = self.ordinals.get((operator, line), 0)
        self.ordinals[(operator, line)] = ordinal + 1
        self.mutants.append(Mutant(f"{operator}@{line}:{ordinal}", operator, line, text))


def mutants(source: str, function_name: str = "solve") -> list[Mutant]:
    """Every single-change mutant of `function_name` in `source`, unique and parseable.

    Raises SyntaxError on unparsable source and ValueError when the function is missing.
    """
    tree = ast.parse(source)
    sites = _sites(_function(tree, function_name))
    collector = _Collector(ast.unparse(tree))
    for name, operator in OPERATORS.items():
        for site in sites:
            line = _line(site)
            for replacement in operator(site):
                collector.add(name, line, _render(tree, site, replacement))
    return collector.mutants
