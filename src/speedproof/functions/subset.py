"""The restricted Python subset a function-mode candidate must stay inside.

The check is the first of four layers (subset, restricted `__builtins__`, the harness's audit hook,
the sandbox) and the only one that can say *why* in words a model can act on: every error names
the offending node type or name and its line, e.g. `line 4: name 'open' is not an allowed builtin`.

Decisions (ADR 0011):
* exactly one top-level `def` (a module docstring may precede it); no async, decorators, default
  values, keyword-only arguments, *args or **kwargs, nested functions, lambdas or classes;
* no imports, global/nonlocal, try/except/finally, raise, assert, with, yield, await, del of
  attributes; `raise` is left out because no exception class is reachable anyway, and a narrow
  subset is easier to trust than a wide one;
* no identifier or attribute starting with `_`;
* a name that is read must be an argument, a local, the function itself (recursion) or one of the
  26 ALLOWED_BUILTINS;
* an attribute may appear only as the callee of a call, and its name must be one of the 35
  ALLOWED_METHODS;
* constants are None, bool, int, float and str (no bytes, complex or Ellipsis), at most 256
  characters of them in all (`literal_budget`, ADR 0065);
* no value whose text or hash is a heap address: iterators are consumed where they are made, the
  function and the builtins are called, not kept (`object_values`, ADR 0065);
* an annotation (argument, return or variable) may only name a type: a name, a dotted name, a
  subscript of those (`dict[str, list[int]]`), None, or a `|` union of them. Anything else would
  run at definition time if annotations were evaluated, and a walrus there would leave a global
  the body could keep state in across calls (ADR 0031).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from speedproof.functions.literal_budget import over_budget
from speedproof.functions.object_values import address_refusal, parents_of
from speedproof.ground.errors import SpeedproofError

MAX_SOURCE_BYTES = 64 * 1024

ALLOWED_BUILTINS: frozenset[str] = frozenset(
    {
        "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "int", "isinstance", "len", "list", "map", "max", "min", "range",
        "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
    }
)  # fmt: skip

ALLOWED_METHODS: frozenset[str] = frozenset(
    {
        # list
        "append", "extend", "pop", "insert", "index", "count", "sort", "reverse", "copy",
        "clear", "remove",
        # dict
        "get", "items", "keys", "values", "setdefault", "update", "popitem",
        # set
        "add", "discard", "union", "intersection", "difference", "issubset", "issuperset",
        "symmetric_difference",
        # str
        "join", "split", "strip", "lower", "upper", "startswith", "endswith", "replace", "find",
    }
)  # fmt: skip

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg,
    ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While, ast.If,
    ast.Break, ast.Continue, ast.Pass, ast.Expr,
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.Call, ast.keyword,
    ast.NamedExpr, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice, ast.Starred,
    ast.Name, ast.List, ast.Tuple, ast.Dict, ast.Set,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension,
    ast.JoinedStr, ast.FormattedValue,
    ast.Load, ast.Store,
    ast.And, ast.Or,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd,
    ast.Invert, ast.Not, ast.UAdd, ast.USub,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
)  # fmt: skip

_ALLOWED_CONSTANTS = (type(None), bool, int, float, str)
_ALL_BUILTINS = frozenset(dir(builtins))


class SubsetError(SpeedproofError):
    """The candidate leaves the restricted subset; the message names the node or name and line."""


def _fail(node: ast.AST | None, message: str) -> SubsetError:
    line = getattr(node, "lineno", None)
    return SubsetError(f"line {line}: {message}" if line is not None else message)


def _bare(message: str) -> SubsetError:
    """An error whose line `check_subset` adds from the walk."""
    return SubsetError(message)


def parse_function(source: str, function_name: str = "solve") -> ast.FunctionDef:
    """Parse `source` and return its one function, or raise SubsetError naming the problem."""
    if len(source.encode("utf-8", "replace")) > MAX_SOURCE_BYTES:
        raise SubsetError(f"source is longer than {MAX_SOURCE_BYTES} bytes")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SubsetError(f"line {exc.lineno}: syntax error: {exc.msg}") from exc
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SubsetError(f"source cannot be parsed: {type(exc).__name__}") from exc
    body = list(tree.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    for statement in body:
        if not isinstance(statement, ast.FunctionDef):
            kind = type(statement).__name__
            raise _fail(statement, f"{kind} at top level; only one def is allowed")
    if len(body) != 1:
        raise _fail(body[1] if body else None, "exactly one top-level def is required")
    function = body[0]
    assert isinstance(function, ast.FunctionDef)
    if function.name != function_name:
        raise _fail(
            function, f"the function must be named {function_name!r}, not {function.name!r}"
        )
    return function


def check_subset(source: str, function_name: str = "solve") -> None:
    """Raise SubsetError unless `source` is one function inside the restricted subset."""
    function = parse_function(source, function_name)
    _check_signature(function)
    bound = _bound_names(function)
    annotations = _annotations(function)
    try:
        parents = parents_of(function)
        builtins = ALLOWED_BUILTINS - bound
        # An annotation never runs (ADR 0031), so the names in it are never values.
        typing = {id(n) for root, _ in annotations.values() for n in ast.walk(root)}
        for node, line in _walk_with_lines(function, function.lineno):
            try:
                if id(node) in annotations:
                    _check_annotation(*annotations[id(node)])
                _check_node(node, function, bound)
                refusal = address_refusal(node, parents, function.name, builtins)
                if refusal is not None and id(node) not in typing:
                    raise _bare(refusal)
            except SubsetError as exc:
                raise SubsetError(f"line {line}: {exc}") from None
        _attributes_only_called(function)
    except RecursionError as exc:
        raise SubsetError("source is nested too deeply") from exc
    refusal = over_budget(function)
    if refusal is not None:
        raise _fail(function, refusal)


def _walk_with_lines(node: ast.AST, line: int) -> Iterator[tuple[ast.AST, int]]:
    """Every node in source order with the line of the nearest node that has one.

    Operator and context nodes (`ast.MatMult`, `ast.Del`) carry no line of their own.
    """
    line = getattr(node, "lineno", line)
    yield node, line
    for child in ast.iter_child_nodes(node):
        yield from _walk_with_lines(child, line)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _check_signature(function: ast.FunctionDef) -> None:
    args = function.args
    if function.decorator_list:
        raise _fail(function.decorator_list[0], "decorators are not allowed")
    if args.defaults or any(default is not None for default in args.kw_defaults):
        raise _fail(function, "default argument values are not allowed")
    if args.vararg is not None or args.kwarg is not None:
        raise _fail(function, "*args and **kwargs are not allowed")
    if args.kwonlyargs:
        raise _fail(function, "keyword-only arguments are not allowed")


def _bound_names(function: ast.FunctionDef) -> set[str]:
    """The function's own name, its arguments and every name it stores to."""
    bound = {function.name}
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return bound


def _annotations(function: ast.FunctionDef) -> dict[int, tuple[ast.expr, str]]:
    """Every annotation in the function by node id, with what it annotates (for the message)."""
    found: dict[int, tuple[ast.expr, str]] = {}
    if function.returns is not None:
        found[id(function.returns)] = (function.returns, "the return annotation")
    for node in ast.walk(function):
        if isinstance(node, ast.arg) and node.annotation is not None:
            where = f"the annotation of argument {node.arg!r}"
            found[id(node.annotation)] = (node.annotation, where)
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            what = repr(target.id) if isinstance(target, ast.Name) else "an assignment"
            found[id(node.annotation)] = (node.annotation, f"the annotation of {what}")
    return found


def _check_annotation(annotation: ast.expr, where: str) -> None:
    offending = _first_non_type(annotation)
    if offending is not None:
        raise _bare(
            f"{type(offending).__name__} is not allowed in {where} "
            "(only type names, subscripts of them, None and |)"
        )


def _first_non_type(node: ast.expr) -> ast.expr | None:
    """The first node that makes `node` more than a type expression, or None if there is none."""
    if isinstance(node, ast.Constant):
        return None if node.value is None else node
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, ast.BitOr):
            return node
        return _first_non_type(node.left) or _first_non_type(node.right)
    if isinstance(node, ast.Subscript):
        if not _is_dotted_name(node.value):
            return node.value
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return next(filter(None, map(_first_non_type, items)), None)
    return None if _is_dotted_name(node) else node


def _is_dotted_name(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _check_node(node: ast.AST, function: ast.FunctionDef, bound: set[str]) -> None:
    if not isinstance(node, _ALLOWED_NODES):
        raise _bare(f"{type(node).__name__} is not allowed")
    if isinstance(node, ast.FunctionDef) and node is not function:
        raise _bare("nested functions are not allowed")
    if isinstance(node, ast.Name):
        _check_name(node, bound)
    elif isinstance(node, ast.arg):
        _check_identifier("argument", node.arg)
    elif isinstance(node, ast.Attribute):
        _check_attribute(node)
    elif isinstance(node, ast.keyword) and node.arg is not None:
        _check_identifier("keyword", node.arg)
    elif isinstance(node, ast.Constant) and not isinstance(node.value, _ALLOWED_CONSTANTS):
        raise _bare(f"constant of type {type(node.value).__name__} is not allowed")


def _check_identifier(kind: str, name: str) -> None:
    if name.startswith("_"):
        raise _bare(f"{kind} {name!r} starts with an underscore")


def _check_name(node: ast.Name, bound: set[str]) -> None:
    _check_identifier("name", node.id)
    # A name that is neither bound nor a builtin (a dropped local, say) is left to fail at run
    # time as NameError: that is a semantic failure of the candidate, not a policy breach.
    if node.id not in bound and node.id not in ALLOWED_BUILTINS and node.id in _ALL_BUILTINS:
        raise _bare(f"name {node.id!r} is not an allowed builtin")


def _check_attribute(node: ast.Attribute) -> None:
    _check_identifier("attribute", node.attr)
    if node.attr not in ALLOWED_METHODS:
        raise _bare(f"attribute {node.attr!r} is not an allowed method")
    if not isinstance(node.ctx, ast.Load):
        raise _bare(f"assignment to attribute {node.attr!r} is not allowed")


def _attributes_only_called(function: ast.FunctionDef) -> None:
    """An attribute must be the callee of a call: `xs.append(x)`, never `f = xs.append`."""
    called = {id(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}
    for node, line in _walk_with_lines(function, function.lineno):
        if isinstance(node, ast.Attribute) and id(node) not in called:
            raise SubsetError(f"line {line}: attribute {node.attr!r} may only be called, not read")
