"""go-scan-not-sort: a slice sorted only to read its first and last elements, scanned instead.

`sort.Ints(x)` then `x[0]` / `x[len(x)-1]` costs O(n log n) for what one O(n) pass finds. The
pass writes the smallest and the largest element into x[0] and x[len(x)-1] and leaves the rest
of x unsorted, so the rule needs proof that nothing else reads x:

* x is a slice this function made itself (make, a literal, append to nil or an empty literal,
  slices.Clone), only ever appended to, copied into, indexed, ranged over or measured before the
  sort, never captured by a closure or passed anywhere, so no other slice shares its array;
* after the sort, x is read only as x[0], x[len(x)-1] and len(x);
* the sort is not inside a loop.

Ties must resolve exactly as the sort resolves them: sort.Ints and sort.Strings have no
distinguishable ties; sort.SliceStable keeps the first smallest at 0 and the last largest at the
end, which is what the pass picks (`less(k, lo)` and `!less(k, hi)`). sort.Slice is unstable:
its choice among ties is not specified, so the rule declines it, as it declines sort.Float64s
(NaN and -0 order).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, call_of
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-scan-not-sort"
SORTS = ("Ints", "Strings", "SliceStable")
READS_BEFORE = ("index_expression", "range_clause")


@dataclass(frozen=True)
class _Scan:
    statement: Node
    name: str
    method: str
    less: Node | None


def _scans(unit: GoUnit) -> list[_Scan]:
    package = unit.package_name("sort")
    found = []
    for statement in unit.function_nodes("expression_statement"):
        call = statement.named_children[0] if statement.named_children else None
        parts = call_of(unit, call) if call is not None else None
        if parts is None or parts[0] != package or parts[1] not in SORTS:
            continue
        _, method, args = parts
        wanted = 2 if method == "SliceStable" else 1
        if len(args) != wanted or args[0].type != "identifier" or unit.in_loop(statement):
            continue
        less = args[1] if method == "SliceStable" else None
        if less is not None and less.type != "func_literal":
            continue
        name = unit.text(args[0])
        if _fresh_slice(unit, name, statement, less) and _ends_only_after(unit, name, statement):
            found.append(_Scan(statement, name, method, less))
    return found


def _fresh_slice(unit: GoUnit, name: str, sort: Node, less: Node | None) -> bool:
    declarations = 0
    for use in unit.uses(name):
        if use.end_byte > sort.start_byte:
            continue
        inside_less = less is not None and unit.inside(use, less)
        if not inside_less and unit.in_closure(use):
            return False
        context = _context(unit, use, name)
        if context == "declaration":
            declarations += 1
        elif context is None and not inside_less:
            return False
    return declarations == 1


def _context(unit: GoUnit, use: Node, name: str) -> str | None:
    """How `use` (an identifier `name` before the sort) uses the slice; None if it may alias."""
    parent = use.parent
    if parent is None:
        return None
    if parent.type in READS_BEFORE:
        return "read"
    holder = parent.parent
    if parent.type == "expression_list" and holder is not None:
        if holder.type == "short_var_declaration" and holder.child_by_field_name("left") == (
            parent
        ):
            right = holder.child_by_field_name("right")
            return "declaration" if right is not None and _makes_fresh(unit, right) else None
        if holder.type == "assignment_statement" and holder.child_by_field_name("left") == (parent):
            right = holder.child_by_field_name("right")
            text = unit.text(right) if right is not None else ""
            return "read" if text.replace(" ", "").startswith(f"append({name},") else None
    if parent.type == "var_spec":
        return "declaration" if parent.child_by_field_name("value") is None else None
    if parent.type == "argument_list" and holder is not None:
        function = holder.child_by_field_name("function")
        called = unit.text(function) if function is not None else ""
        first = parent.named_children[0] == use
        if called == "len" or (called in ("append", "copy") and first):
            return "read"
    return None


def _makes_fresh(unit: GoUnit, right: Node) -> bool:
    if len(right.named_children) != 1:
        return False
    value = right.named_children[0]
    text = unit.text(value).replace(" ", "")
    if value.type == "composite_literal":
        return True
    return text.startswith(("make(", "slices.Clone(")) or (
        text.startswith("append([]") and ("(nil)," in text or "{}," in text)
    )


def _ends_only_after(unit: GoUnit, name: str, sort: Node) -> bool:
    after = [u for u in unit.uses(name) if u.start_byte >= sort.end_byte]
    if not after:
        return False
    ends = {f"{name}[0]", f"{name}[len({name})-1]"}
    for use in after:
        parent = use.parent
        if parent is None:
            return False
        if parent.type == "index_expression" and unit.text(parent).replace(" ", "") in ends:
            continue
        holder = parent.parent
        if parent.type == "argument_list" and holder is not None:
            function = holder.child_by_field_name("function")
            if function is not None and unit.text(function) == "len":
                grand = holder.parent
                if (
                    grand is not None
                    and grand.type == "binary_expression"
                    and (grand.parent is not None and grand.parent.type == "index_expression")
                    and unit.text(grand.parent).replace(" ", "") in ends
                ):
                    continue
                if _outside_index(unit, holder):
                    continue
        return False
    return True


def _outside_index(unit: GoUnit, length: Node) -> bool:
    """len(x) used as a value of its own (not inside an index of x)."""
    return not unit.enclosed_by(length, "index_expression")


def find(unit: GoUnit) -> Finding | None:
    scans = _scans(unit)
    if not scans:
        return None
    first = scans[0]
    return Finding(
        rule=RULE,
        cause="superlinear",
        evidence=(
            f"{unit.subject.bare_name} sorts {first.name} with sort.{first.method} and then "
            f"reads only {first.name}[0] and {first.name}[len({first.name})-1]"
        ),
    )


def propose(unit: GoUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    edits = []
    taken: set[str] = set()
    for scan in _scans(unit):
        names = {}
        for base in ("less", "lo", "hi", "k"):
            names[base] = unit.fresh(base, taken)
            taken.add(names[base])
        edits.append(
            Edit(scan.statement.start_byte, scan.statement.end_byte, _pass(unit, scan, names))
        )
    hypothesis = (
        f"{unit.subject.bare_name} sorts a whole slice (O(n log n)) only to read its first and "
        "last elements; one pass finds the same two elements, ties resolved as the sort "
        "resolves them."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis)


def _pass(unit: GoUnit, scan: _Scan, names: dict[str, str]) -> str:
    x, k, lo, hi = scan.name, names["k"], names["lo"], names["hi"]
    indent = unit.indent(scan.statement)
    lines = [f"if len({x}) > 1 {{"]
    if scan.less is not None:
        less = unit.text(scan.less).replace("\n", "\n\t")
        lines.append(f"\t{names['less']} := {less}")
        smaller = f"{names['less']}({k}, {lo})"
        not_larger = f"!{names['less']}({k}, {hi})"
    else:
        smaller = f"{x}[{k}] < {x}[{lo}]"
        not_larger = f"{x}[{hi}] <= {x}[{k}]"
    lines += [
        f"\t{lo}, {hi} := 0, 0",
        f"\tfor {k} := 1; {k} < len({x}); {k}++ {{",
        f"\t\tif {smaller} {{",
        f"\t\t\t{lo} = {k}",
        "\t\t}",
        f"\t\tif {not_larger} {{",
        f"\t\t\t{hi} = {k}",
        "\t\t}",
        "\t}",
        f"\t{x}[0], {x}[len({x})-1] = {x}[{lo}], {x}[{hi}]",
        "}",
    ]
    return ("\n" + indent).join(lines)
