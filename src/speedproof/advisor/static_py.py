"""Structural detectors of the seven causes in a Python function (libcst facts).

Each detector returns the evidence it found, each piece weighted by how directly it points at
the cause: 1.0 for the pattern itself (a string grown with += in a loop), less for a pattern
that is often harmless (a slice copied in a loop: 0.5; print() in a loop, whose stdout is
block-buffered when piped: 0.6). `static` turns the weights into a probability.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from speedproof.advisor.pyfacts import PyCall, PyFacts, PyLoop, constant
from speedproof.advisor.sites import Evidence, IoSite, at, nested_loops

PURE_CALLS = frozenset({"sorted", "sum", "max", "min", "set", "list", "tuple", "frozenset"})
PURE_METHODS = frozenset({"lower", "upper", "strip", "split", "casefold", "replace", "join"})
CONSUMERS = frozenset({"sum", "any", "all", "max", "min", "len", "sorted", "set", "tuple"})
COPIES = frozenset({"list", "tuple", "dict", "set"})
REGEX_CALLS = frozenset(
    {"re.match", "re.search", "re.fullmatch", "re.sub", "re.split", "re.findall", "re.compile"}
)
REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")
SHIFTING = frozenset({"index", "count", "remove"})


def _string_literal(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def allocation(f: PyFacts) -> list[Evidence]:
    found = [
        Evidence(f"constant literal {s.text[:40]} is rebuilt on every iteration ({at(s.line)})")
        for s in f.literals
        if s.in_loop and constant(s.node)
    ]
    found += [
        Evidence(f"slice {s.text[:40]} copies its items on every iteration ({at(s.line)})", 0.5)
        for s in f.slices
        if s.in_loop
    ]
    for call in f.calls:
        node = call.node
        assert isinstance(node, cst.Call)
        first = node.args[0].value if len(node.args) == 1 else None
        if call.name in CONSUMERS and isinstance(first, cst.ListComp):
            found.append(
                Evidence(
                    f"a list is built only to be consumed by {call.name}() ({at(call.line)})", 0.7
                )
            )
        elif call.in_loop and _copies(call, first):
            found.append(Evidence(f"{call.text[:40]} copies on every iteration", 0.7))
    return found


def _copies(call: PyCall, first: cst.BaseExpression | None) -> bool:
    """list(xs), dict(d), ... or xs.copy(): a whole collection copied."""
    node = call.node
    assert isinstance(node, cst.Call)
    if call.name in COPIES and isinstance(first, cst.Name):
        return True
    return call.method == "copy" and bool(call.receiver) and not node.args


def unbuffered_io(f: PyFacts) -> list[Evidence]:
    found = []
    for site in f.io_sites():
        if site.destination != "real":
            continue
        forced = "flush" in site.call or site.call.startswith("os.")
        weight = (1.0 if forced else 0.6) * (1.0 if site.in_loop else 0.4)
        where = "in a loop" if site.in_loop else "once per call"
        found.append(
            Evidence(f"{site.call[:50]} {where}: {site.why} ({at(site.line)})", round(weight, 3))
        )
    return found + unknown_destinations(f.io_sites())


def unknown_destinations(sites: list[IoSite]) -> list[Evidence]:
    """Writes to a destination the function does not show count once, weakly (0.3 in a loop,
    0.15 outside), however many there are: they are all the same unknown."""
    unknown = [s for s in sites if s.destination == "unknown"]
    if not unknown:
        return []
    looped = [s for s in unknown if s.in_loop]
    site = (looped or unknown)[0]
    weight = 0.3 if looped else 0.15
    return [Evidence(f"{site.call[:50]}: {site.why} ({at(site.line)})", weight)]


def _stringy(node: cst.BaseExpression | None, f: PyFacts) -> bool:
    if node is None:
        return False
    if isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return True
    if isinstance(node, cst.Call):
        name = f.code(node.func)
        return name in ("str", "repr", "format", "chr") or name.endswith((".join", ".format"))
    if isinstance(node, cst.BinaryOperation):
        return _stringy(node.left, f) or _stringy(node.right, f)
    if isinstance(node, cst.Name):
        return f.kind_of(node.value) == "str"
    return False


def string_building(f: PyFacts) -> list[Evidence]:
    return [
        Evidence(f"{u.target} is grown by concatenation in a loop: {u.text[:50]} ({at(u.line)})")
        for u in f.updates
        if u.in_loop
        and u.op in ("+=", "=")
        and (f.kind_of(u.target) == "str" or _stringy(u.value, f))
    ]


def fast_path(f: PyFacts) -> list[Evidence]:
    found = []
    for call in f.calls:
        node = call.node
        assert isinstance(node, cst.Call)
        if call.name in REGEX_CALLS and node.args:
            pattern = _string_literal(node.args[0].value)
            if pattern is not None and not REGEX_SPECIAL.search(pattern):
                found.append(
                    Evidence(
                        f"regular expression {pattern!r} has no special characters: a str "
                        f"method does the same ({at(call.line)})"
                    )
                )
    for site in f.indexed_calls:
        text = site.text
        if re.match(r"sorted\(.*\)\[(0|-1)\]$", text, re.DOTALL):
            found.append(Evidence(f"{text[:40]} sorts everything to take one end: min/max"))
        elif re.match(r"sorted\(.*\)\[:", text, re.DOTALL):
            found.append(Evidence(f"{text[:40]} sorts everything to take a few", 0.7))
        elif re.search(r"\.split\(.*\)\[(0|-1)\]$", text, re.DOTALL):
            found.append(Evidence(f"{text[:40]} splits everything to take one part", 0.5))
    return found


def superlinear(f: PyFacts) -> list[Evidence]:
    found = nested_loops(f.loops)
    for member in f.members:
        if not member.in_loop or constant(member.node):
            continue
        node = member.node
        kind = f.kind_of(node.value) if isinstance(node, cst.Name) else ""
        if isinstance(node, cst.List | cst.ListComp) or kind == "list":
            found.append(Evidence(f"membership test in list {member.text[:30]} inside a loop"))
        elif kind == "" and not isinstance(node, cst.Set | cst.SetComp | cst.Dict | cst.DictComp):
            found.append(
                Evidence(
                    f"membership test in {member.text[:30]} inside a loop; it is not known to "
                    f"be a set or dict ({at(member.line)})",
                    0.6,
                )
            )
    for call in f.calls:
        if not call.in_loop or not call.receiver:
            continue
        node = call.node
        assert isinstance(node, cst.Call)
        head = f.code(node.args[0].value) if node.args else ""
        if call.method in ("insert", "pop") and head == "0":
            found.append(Evidence(f"{call.text[:40]} shifts every element ({at(call.line)})"))
        elif call.method in SHIFTING and f.kind_of(call.receiver) != "str":
            found.append(Evidence(f"{call.text[:40]} scans the list ({at(call.line)})", 0.7))
    return found


def _unconditional_appends(loop: PyLoop) -> list[str]:
    """Names appended to by a statement directly in a for loop's body."""
    node = loop.node
    if not isinstance(node, cst.For) or not isinstance(node.body, cst.IndentedBlock):
        return []
    names = []
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "append"
                and isinstance(call.func.value, cst.Name)
            ):
                names.append(call.func.value.value)
    return names


def preallocation(f: PyFacts) -> list[Evidence]:
    found = []
    for loop in f.loops:
        if loop.kind != "for" or loop.bounded:
            continue
        for name in _unconditional_appends(loop):
            if f.kind_of(name) == "list":
                found.append(
                    Evidence(
                        f"{name} gets one append per item of {loop.iterable[:30]}: its final "
                        f"size is known before the loop ({at(loop.line)})"
                    )
                )
    found += [
        Evidence(f"list {u.target} is re-concatenated in a loop ({at(u.line)})", 0.7)
        for u in f.updates
        if u.in_loop and f.kind_of(u.target) == "list"
    ]
    return found


def _invariant_call(call: PyCall, f: PyFacts) -> bool:
    node = call.node
    assert isinstance(node, cst.Call)
    loop = call.loops[-1]
    parts: list[cst.CSTNode] = [arg.value for arg in node.args]
    if isinstance(node.func, cst.Attribute):
        parts.append(node.func.value)
    return bool(parts) and all(f.invariant(part, loop) for part in parts)


def repeated_work(f: PyFacts) -> list[Evidence]:
    found = []
    for call in f.calls:
        node = call.node
        assert isinstance(node, cst.Call)
        if call.name == "re.compile":
            found.append(
                Evidence(f"{call.text[:40]} runs on every call (re caches it: a lookup)", 0.3)
            )
            continue
        if not call.in_loop:
            continue
        pure = call.name in PURE_CALLS or (call.receiver and call.method in PURE_METHODS)
        if pure and _invariant_call(call, f):
            found.append(
                Evidence(
                    f"{call.text[:40]} is computed again on every iteration from the same "
                    f"input ({at(call.line)})"
                )
            )
        elif call.name in ("sum", "max", "min") and node.args:
            argument = node.args[0].value
            if isinstance(argument, cst.Subscript) and any(
                isinstance(e.slice, cst.Slice) for e in argument.slice
            ):
                found.append(
                    Evidence(
                        f"{call.text[:40]} aggregates an overlapping window again on every "
                        f"iteration ({at(call.line)})"
                    )
                )
    found += _invariant_comprehensions(f)
    return found


def _invariant_comprehensions(f: PyFacts) -> list[Evidence]:
    found = []
    for site in f.comprehensions:
        if not site.in_loop:
            continue
        names, calls = f.reads(site.node)
        own = f.bound_in(site.node)
        outer = f.assigned_within(site.loops[-1]) - own
        if not (names - own) & outer and not calls:
            found.append(
                Evidence(
                    f"{site.text[:40]} builds the same collection on every iteration "
                    f"({at(site.line)})",
                    0.7,
                )
            )
    return found


DETECTORS: dict[str, Callable[[PyFacts], list[Evidence]]] = {
    "allocation": allocation,
    "unbuffered_io": unbuffered_io,
    "string_building": string_building,
    "fast_path": fast_path,
    "superlinear": superlinear,
    "preallocation": preallocation,
    "repeated_work": repeated_work,
}
