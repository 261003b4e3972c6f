"""py-min-max-not-sorted: `sorted(x)[0]` sorts n items to read one; `min(x)` reads each once.

Exactness, case by case (Python's sort is stable; min and max keep the first of equal items):

* `sorted(x, key=k)[0]` is the first smallest item in x's order: `min(x, key=k)` exactly.
* `sorted(x, key=k)[-1]` is the *last* largest item, while `max` returns the first: the rewrite
  is `max(reversed(list(x)), key=k)`, which is the last largest again (the list copy is O(n),
  and makes a generator argument reversible).
* with `reverse=True` the two swap: `[0]` is the first largest (`max(x, key=k)`), `[-1]` the
  last smallest (`min(reversed(list(x)), key=k)`).

On an empty x, `sorted(x)[0]` raises IndexError and `min(x)` ValueError: the rule declines when
the expression sits in a `try` whose handlers could tell them apart (IndexError, LookupError,
ValueError, Exception, BaseException or a bare except). Everything else is the same, NaN
included only as far as sorting NaN is itself order-dependent. `sorted`, `min`, `max`,
`reversed` and `list` must be the builtins.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from speedproof.agents.heuristic.py_edit import function_proposal
from speedproof.agents.heuristic.py_facts import (
    PyUnit,
    Replacement,
    literal_value,
    names_in,
    replace_nodes,
)
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "py-min-max-not-sorted"
TELLING_HANDLERS = {"IndexError", "LookupError", "ValueError", "Exception", "BaseException"}
NEEDED_BUILTINS = ("min", "max", "reversed", "list")


@dataclass(frozen=True)
class _Site:
    subscript: cst.Subscript
    iterable: cst.Arg
    key: cst.Arg | None
    first: bool  # [0] rather than [-1]
    reverse: bool


def _sites(unit: PyUnit) -> list[_Site]:
    if any(unit.binds_globally(name) or unit.binds_locally(name) for name in NEEDED_BUILTINS):
        return []
    found = []
    for node in unit.function_nodes(cst.Subscript):
        assert isinstance(node, cst.Subscript)
        site = _site(unit, node)
        if site is not None and not _in_telling_try(unit, node):
            found.append(site)
    return found


def _site(unit: PyUnit, node: cst.Subscript) -> _Site | None:
    call = node.value
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "sorted"
        and unit.is_builtin(call.func)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return None
    try:
        index = literal_value(node.slice[0].slice.value)
    except (ValueError, SyntaxError):
        return None
    if index not in (0, -1) or isinstance(index, bool):
        return None
    arguments = _arguments(call)
    if arguments is None:
        return None
    iterable, key, reverse = arguments
    return _Site(node, iterable, key, index == 0, reverse)


def _arguments(call: cst.Call) -> tuple[cst.Arg, cst.Arg | None, bool] | None:
    """(iterable, key, reverse) of a `sorted` call; None for anything unusual."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    key: cst.Arg | None = None
    reverse = False
    for arg in call.args[1:]:
        if arg.keyword is None or arg.star:
            return None
        if arg.keyword.value == "key":
            key = arg
        elif arg.keyword.value == "reverse":
            if not isinstance(arg.value, cst.Name) or arg.value.value not in ("True", "False"):
                return None
            reverse = arg.value.value == "True"
        else:
            return None
    return call.args[0], key, reverse


def _in_telling_try(unit: PyUnit, node: cst.CSTNode) -> bool:
    for ancestor in unit.ancestors(node):
        if ancestor is unit.function:
            return False
        if isinstance(ancestor, cst.Try):
            for handler in ancestor.handlers:
                if handler.type is None:
                    return True
                caught = names_in(handler.type)
                if caught & TELLING_HANDLERS:
                    return True
    return False


def find(unit: PyUnit) -> Finding | None:
    sites = _sites(unit)
    if not sites:
        return None
    return Finding(
        rule=RULE,
        cause="superlinear",
        evidence=(
            f"`{unit.code(sites[0].subscript)}` in {unit.function.name.value} sorts every "
            "item to read the smallest or the largest"
        ),
    )


def propose(unit: PyUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    mapping: dict[int, Replacement] = {}
    for site in _sites(unit):
        mapping[id(site.subscript)] = _rewrite(site)
    new_function = replace_nodes(unit.function, mapping)
    hypothesis = (
        f"{unit.function.name.value} sorts a whole sequence (O(n log n)) only to take its "
        "first or last item; min/max find the same item in one pass, ties resolved the way "
        "the stable sort resolves them."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)


def _rewrite(site: _Site) -> cst.BaseExpression:
    smallest = site.first != site.reverse
    function = "min" if smallest else "max"
    iterable = site.iterable.value
    if not site.first:
        # The last of equal items: the first of them in reversed order.
        as_list = cst.Call(func=cst.Name("list"), args=[cst.Arg(value=iterable)])
        iterable = cst.Call(func=cst.Name("reversed"), args=[cst.Arg(value=as_list)])
    args = [cst.Arg(value=iterable)]
    if site.key is not None:
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(site.key.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return cst.Call(
        func=cst.Name(function), args=args, lpar=site.subscript.lpar, rpar=site.subscript.rpar
    )
