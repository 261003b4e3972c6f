"""go-prealloc-append: a slice appended to once per iteration of a loop over a known length,
allocated with that capacity up front.

`x := make([]T, 0)` followed by `for _, v := range r { x = append(x, f(v)) }` reallocates and
copies x about log2(len(r)) times and leaves up to half its capacity unused; with
`make([]T, 0, len(r))` it allocates once. Capacity is only a hint: the elements, their order
and len(x) are the same whatever it is, so the change is exact. To make the hint right (and
not raise peak memory), the loop must append exactly once per iteration: one unconditional
`x = append(x, v)` at the top of its body and no break, continue, return or goto.

Forms:

* the declaration (`make([]T, 0)` or `[]T{}`) is the statement right before the loop: it
  becomes `make([]T, 0, len(r))`;
* otherwise, and for `var x []T` (nil, which a capacity would make non-nil), the line
  `x = slices.Grow(x, len(r))` goes right before the loop. Grow leaves x untouched when
  len(r) is 0, so a nil slice stays nil; it needs Go 1.21.

r must be a name or a field selector (no calls, which len(r) would repeat).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, statements_of
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-prealloc-append"
JUMPS = ("break_statement", "continue_statement", "return_statement", "goto_statement")


@dataclass(frozen=True)
class _Grow:
    name: str
    declaration: Node
    fresh: Node | None  # the make([]T, 0) / []T{} expression, None for `var x []T`
    loop: Node
    bound: str  # the text of r


def _grows(unit: GoUnit) -> list[_Grow]:
    found = []
    for block in unit.function_nodes("block"):
        statements = statements_of(block)
        for index, statement in enumerate(statements):
            declared = _empty_slice(unit, statement)
            if declared is None:
                continue
            name, fresh = declared
            later = statements[index + 1 :]
            loop = next((s for s in later if unit.uses(name, s)), None)
            if loop is None or loop.type != "for_statement":
                continue
            bound = _bound(unit, loop, name)
            if bound is not None and _appends_once(unit, loop, name):
                found.append(_Grow(name, statement, fresh, loop, bound))
    return found


def _empty_slice(unit: GoUnit, statement: Node) -> tuple[str, Node | None] | None:
    """(name, empty slice expression) for `x := make([]T, 0)` / `x := []T{}`, and (name, None)
    for `var x []T`."""
    if statement.type == "short_var_declaration":
        left, right = statement.child_by_field_name("left"), statement.child_by_field_name("right")
        if left is None or right is None:
            return None
        if len(left.named_children) != 1 or len(right.named_children) != 1:
            return None
        value = right.named_children[0]
        if _is_empty_slice(unit, value):
            return unit.text(left.named_children[0]), value
        return None
    if statement.type == "var_declaration":
        specs = [c for c in statement.named_children if c.type == "var_spec"]
        if len(specs) != 1 or len(specs[0].children_by_field_name("name")) != 1:
            return None
        kind = specs[0].child_by_field_name("type")
        if (
            specs[0].child_by_field_name("value") is None
            and kind is not None
            and (kind.type == "slice_type")
        ):
            return unit.text(specs[0].children_by_field_name("name")[0]), None
    return None


def _is_empty_slice(unit: GoUnit, node: Node) -> bool:
    if node.type == "composite_literal":
        kind, body = node.child_by_field_name("type"), node.child_by_field_name("body")
        return (
            kind is not None
            and kind.type == "slice_type"
            and body is not None
            and not body.named_children
        )
    if node.type == "call_expression":
        function, arguments = (
            node.child_by_field_name("function"),
            node.child_by_field_name("arguments"),
        )
        if function is None or arguments is None or unit.text(function) != "make":
            return False
        args = [c for c in arguments.named_children if c.type != "comment"]
        return len(args) == 2 and args[0].type == "slice_type" and unit.text(args[1]) == "0"
    return False


def _bound(unit: GoUnit, loop: Node, name: str) -> str | None:
    """The text of r when the loop runs exactly len(r) times."""
    clause = next(
        (c for c in loop.named_children if c.type in ("range_clause", "for_clause")), None
    )
    if clause is None:
        return None
    if clause.type == "range_clause":
        right = clause.child_by_field_name("right")
        target = right
    else:
        target = _counted(unit, clause)
    if target is None or target.type not in ("identifier", "selector_expression"):
        return None
    if any(
        n.type not in ("identifier", "selector_expression", "field_identifier", ".")
        for n in unit.walk(target)
    ):
        return None
    if unit.uses(name, target):
        return None
    return unit.text(target)


def _counted(unit: GoUnit, clause: Node) -> Node | None:
    """r of `for i := 0; i < len(r); i++`."""
    init = clause.child_by_field_name("initializer")
    condition = clause.child_by_field_name("condition")
    update = clause.child_by_field_name("update")
    if init is None or condition is None or update is None:
        return None
    left = init.child_by_field_name("left")
    if left is None or len(left.named_children) != 1:
        return None
    counter = unit.text(left.named_children[0])
    if unit.text(init).replace(" ", "") != f"{counter}:=0":
        return None
    if unit.text(update).replace(" ", "") != f"{counter}++":
        return None
    if condition.type != "binary_expression":
        return None
    lhs, operator, rhs = (
        condition.child_by_field_name("left"),
        condition.child_by_field_name("operator"),
        condition.child_by_field_name("right"),
    )
    if lhs is None or operator is None or rhs is None:
        return None
    if unit.text(lhs) != counter or unit.text(operator) != "<" or rhs.type != "call_expression":
        return None
    function, arguments = rhs.child_by_field_name("function"), rhs.child_by_field_name("arguments")
    if function is None or arguments is None or unit.text(function) != "len":
        return None
    args = arguments.named_children
    return args[0] if len(args) == 1 else None


def _appends_once(unit: GoUnit, loop: Node, name: str) -> bool:
    body = loop.child_by_field_name("body")
    if body is None or any(n.type in JUMPS for n in unit.walk(body)):
        return False
    appends = [s for s in statements_of(body) if _is_append(unit, s, name)]
    if len(appends) != 1:
        return False
    return len(unit.uses(name, loop)) == 2 == len(unit.uses(name, appends[0]))


def _is_append(unit: GoUnit, statement: Node, name: str) -> bool:
    if statement.type != "assignment_statement":
        return False
    left, right = statement.child_by_field_name("left"), statement.child_by_field_name("right")
    operator = statement.child_by_field_name("operator")
    if left is None or right is None or operator is None or unit.text(operator) != "=":
        return False
    if unit.text(left) != name or len(right.named_children) != 1:
        return False
    call = right.named_children[0]
    function, arguments = (
        call.child_by_field_name("function"),
        call.child_by_field_name("arguments"),
    )
    if function is None or arguments is None or unit.text(function) != "append":
        return False
    args = [c for c in arguments.named_children if c.type != "comment"]
    return (
        len(args) == 2
        and unit.text(args[0]) == name
        and args[1].type != "variadic_argument"
        and not unit.text(arguments).rstrip(") \n\t,").endswith("...")
    )


def find(unit: GoUnit) -> Finding | None:
    grows = _grows(unit)
    if not grows:
        return None
    first = grows[0]
    return Finding(
        rule=RULE,
        cause="preallocation",
        evidence=(
            f"{unit.subject.bare_name} appends to {first.name} once per element of "
            f"{first.bound} without reserving len({first.bound}) capacity"
        ),
    )


def propose(unit: GoUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    edits: list[Edit] = []
    imports: list[str] = []
    for grow in _grows(unit):
        adjacent = grow.declaration.next_named_sibling == grow.loop
        if grow.fresh is not None and adjacent:
            kind = _slice_type(unit, grow.fresh)
            text = f"make({kind}, 0, len({grow.bound}))"
            edits.append(Edit(grow.fresh.start_byte, grow.fresh.end_byte, text))
        else:
            slices = unit.package_name("slices") or "slices"
            line = f"{grow.name} = {slices}.Grow({grow.name}, len({grow.bound}))\n"
            edits.append(
                Edit(grow.loop.start_byte, grow.loop.start_byte, line + unit.indent(grow.loop))
            )
            imports.append("slices")
    hypothesis = (
        f"{unit.subject.bare_name} appends one element per loop iteration to a slice "
        "allocated without capacity, reallocating and copying it as it grows; reserving "
        "the loop's length up front allocates once."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis, imports=imports)


def _slice_type(unit: GoUnit, fresh: Node) -> str:
    if fresh.type == "composite_literal":
        kind = fresh.child_by_field_name("type")
    else:
        arguments = fresh.child_by_field_name("arguments")
        kind = arguments.named_children[0] if arguments is not None else None
    assert kind is not None
    return unit.text(kind)
