"""The loop skeleton of a function: its control flow and call shapes, names and literals erased.

Two templates that differ only in identifiers, constants, arithmetic or the normalisation a case
asks for have the same skeleton; two that iterate differently (a `while` against a `for`, a
comprehension against an explicit loop, a `for ... else`, a slice-and-count against a scan) do
not. The leakage audit requires that no skeleton of the frozen seen-family split occurs in train
or dev, so "new template" means "new loop structure", not "new id". ADR 0015.

Tokens:
  F(iter)[body]{else}   for loop; `iter` is the shape of the iterated expression
  W(test)[body]{else}   while loop
  I(test)[body]{else}   if statement (an `x if c else y` expression is erased: it is arithmetic)
  R(value) B C          return, break, continue
  A(value) E(value)     an assignment or expression statement, kept only when its value holds a
                        call or a comprehension
  f<n> / m<n>           a call of a plain name / of a method, with n arguments, then its
                        argument shapes in parentheses when they hold calls or comprehensions
  L S D G{g(iter)?...}  list, set, dict, generator comprehension; `g` per generator, `?` per
                        `if` clause, then the element shape
"""

from __future__ import annotations

import ast

_COMPREHENSIONS: dict[type[ast.AST], str] = {
    ast.ListComp: "L",
    ast.SetComp: "S",
    ast.DictComp: "D",
    ast.GeneratorExp: "G",
}


def _shape(node: ast.AST | None) -> str:
    """Calls and comprehensions inside an expression, in source order; everything else erased."""
    if node is None:
        return ""
    if isinstance(node, ast.Call):
        return _call(node)
    kind = _COMPREHENSIONS.get(type(node))
    if kind is not None:
        assert isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        return _comprehension(kind, node)
    return "".join(_shape(child) for child in ast.iter_child_nodes(node))


def _call(node: ast.Call) -> str:
    kind = "m" if isinstance(node.func, ast.Attribute) else "f"
    receiver = _shape(node.func.value) if isinstance(node.func, ast.Attribute) else ""
    inner = "".join(_shape(arg) for arg in [*node.args, *(k.value for k in node.keywords)])
    count = len(node.args) + len(node.keywords)
    return f"{receiver}{kind}{count}" + (f"({inner})" if inner else "")


def _comprehension(
    kind: str, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
) -> str:
    parts = []
    for gen in node.generators:
        parts.append(f"g({_shape(gen.iter)})" + "".join(f"?{_shape(c)}" for c in gen.ifs))
    if isinstance(node, ast.DictComp):
        element = _shape(node.key) + _shape(node.value)
    else:
        element = _shape(node.elt)
    return f"{kind}{{{''.join(parts)}|{element}}}"


def _block(body: list[ast.stmt]) -> str:
    return "".join(_statement(s) for s in body)


def _compound(letter: str, head: str, body: list[ast.stmt], orelse: list[ast.stmt]) -> str:
    text = f"{letter}({head})[{_block(body)}]"
    return text + (f"{{{_block(orelse)}}}" if orelse else "")


def _simple(letter: str, value: ast.AST | None) -> str:
    inner = _shape(value)
    return f"{letter}({inner})" if inner else ""


def _statement(node: ast.stmt) -> str:
    if isinstance(node, ast.For):
        return _compound("F", _shape(node.iter), node.body, node.orelse)
    if isinstance(node, ast.While):
        return _compound("W", _shape(node.test), node.body, node.orelse)
    if isinstance(node, ast.If):
        return _compound("I", _shape(node.test), node.body, node.orelse)
    if isinstance(node, ast.Return):
        return f"R({_shape(node.value)})"
    if isinstance(node, ast.Break):
        return "B"
    if isinstance(node, ast.Continue):
        return "C"
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        return _simple("A", node.value)
    if isinstance(node, ast.Expr):
        return _simple("E", node.value)
    return "".join(_statement(s) for s in ast.iter_child_nodes(node) if isinstance(s, ast.stmt))


def loop_skeleton(source: str) -> str:
    """The skeleton of the first function in `source` (see the module docstring)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return f"def[{_block(node.body)}]"
    raise ValueError("source holds no top-level function")
