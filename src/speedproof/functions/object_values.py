"""Values that would name a heap address stay out of a candidate's reach.

The text of an iterator, a generator or a function is `<map object at 0x7f…>`, and the hash of
a builtin function or type is taken from its address, so a set of them iterates in an order the
address decides. Inside the subset that was readable with `str(map(abs, xs))`. Addresses under
Cachegrind differ from those of a plain run (another loader, another allocator), so a candidate
could tell a measured run from the correctness run and take, only when measured, a shortcut
checked against five benchmark inputs instead of every hidden input. Three rules keep every such
object transient, so none is ever printed, formatted or hashed:

* an iterator (`map`, `filter`, `zip`, `enumerate`, `reversed` called, a generator expression,
  or a `.values()` view, hashed by its address) is consumed where it is made: as what a `for`
  or a comprehension iterates, an argument of a builtin or method that iterates it (`list`,
  `sorted`, `sum`, `"".join`, …), or the right side of `in`;
* the function's own name may only be called (recursion);
* a builtin used as a value may only be `map`'s or `filter`'s function, a `key=`, a method's
  owner (`str.join`) or `isinstance`'s type; the iterator builtins may only be called.

One address stays readable on Python 3.11, where the sandbox's interpreter is: hash(None) is
None's address, so a set of more than 256 slots holding None iterates in an order it decides
(3.12 made that hash a constant). ADR 0065 says what a measured-only path can and cannot gain.
"""

from __future__ import annotations

import ast

ITERATOR_BUILTINS = frozenset({"map", "filter", "zip", "enumerate", "reversed"})
_ITERATING_BUILTINS = frozenset(
    {"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min", "max", "any", "all"}
    | ITERATOR_BUILTINS
)
_ITERATING_METHODS = frozenset(
    {"extend", "update", "join", "union", "intersection", "difference", "symmetric_difference",
     "issubset", "issuperset"}
)  # fmt: skip
_FUNCTION_TAKERS = frozenset({"map", "filter"})

Parents = dict[int, ast.AST]


def parents_of(function: ast.FunctionDef) -> Parents:
    """Each node's parent, by node id."""
    return {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}


def address_refusal(
    node: ast.AST, parents: Parents, function_name: str, builtins: frozenset[str]
) -> str | None:
    """Why `node` would hand the candidate an object whose text or hash is an address.

    `builtins` are the allowed builtin names the function does not rebind.
    """
    parent = parents.get(id(node))
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return _name_refusal(node, parent, parents, function_name, builtins)
    if _makes_iterator(node, builtins) and not _consumed(node, parent, parents, builtins):
        what = "a generator expression" if isinstance(node, ast.GeneratorExp) else "an iterator"
        return (
            f"{what} must be consumed where it is made (iterated by a for or a comprehension, "
            "or passed to list, sorted, sum, join, …): its value names a heap address"
        )
    return None


def _called_name(node: ast.AST) -> str | None:
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None


def _name_refusal(
    node: ast.Name,
    parent: ast.AST | None,
    parents: Parents,
    function_name: str,
    builtins: frozenset[str],
) -> str | None:
    if isinstance(parent, ast.Call) and parent.func is node:
        return None
    if node.id == function_name:
        return f"the function {node.id!r} may only be called: its value names a heap address"
    if node.id not in builtins:
        return None
    if node.id in ITERATOR_BUILTINS:
        return f"builtin {node.id!r} may only be called"
    if _builtin_value_allowed(node, parent, parents):
        return None
    return (
        f"builtin {node.id!r} as a value may only be map's or filter's function, a key= or "
        "isinstance's type: its hash is a heap address"
    )


def _builtin_value_allowed(node: ast.Name, parent: ast.AST | None, parents: Parents) -> bool:
    if isinstance(parent, ast.Attribute):
        return True  # str.join(...): the attribute itself must be called (subset.py)
    if isinstance(parent, ast.keyword):
        return parent.arg == "key"
    if isinstance(parent, ast.Tuple):
        node, parent = parent, parents.get(id(parent))  # type: ignore[assignment]
    if not isinstance(parent, ast.Call) or node not in parent.args:
        return False
    name = _called_name(parent)
    position = parent.args.index(node)
    return (name in _FUNCTION_TAKERS and position == 0) or (name == "isinstance" and position == 1)


def _makes_iterator(node: ast.AST, builtins: frozenset[str]) -> bool:
    if isinstance(node, ast.GeneratorExp):
        return True
    # `dict.values()` is the one view hashed by its address (keys and items views are not
    # hashable at all), so it is consumed where it is made like an iterator.
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "values"
    name = _called_name(node)
    return name in ITERATOR_BUILTINS and name in builtins


def _consumed(
    node: ast.AST, parent: ast.AST | None, parents: Parents, builtins: frozenset[str]
) -> bool:
    if isinstance(parent, ast.Starred):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.For | ast.comprehension):
        return parent.iter is node
    if isinstance(parent, ast.Compare):
        return any(
            isinstance(op, ast.In | ast.NotIn) and right is node
            for op, right in zip(parent.ops, parent.comparators, strict=True)
        )
    if not isinstance(parent, ast.Call) or not any(arg is node for arg in parent.args):
        return False
    name = _called_name(parent)
    if name is not None:
        return name in _ITERATING_BUILTINS and name in builtins
    return isinstance(parent.func, ast.Attribute) and parent.func.attr in _ITERATING_METHODS
