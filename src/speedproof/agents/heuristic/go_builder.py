"""go-strings-builder: a string grown with `+=` in a loop, built with a strings.Builder.

Go strings are immutable: `s += part` allocates a new string and copies all of s into it, so n
appends cost O(n^2) bytes copied (1,200 report lines of 80 bytes: about 58 MB). A
strings.Builder appends in place, doubling its buffer. `s += fmt.Sprintf(f, args...)` becomes
`fmt.Fprintf(&b, f, args...)`, which formats straight into the builder with the same printer.

Applies when s is declared once in the function as a string (`var s string`, a string literal,
or a call known to return a string), the loop is the next statement after the declaration that
mentions s, the loop's only uses of s are `s += ...` outside closures, and s is read after the
loop (where `s := b.String()` restores it). The text is identical; only the allocations change.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import (
    STRING_LITERALS,
    STRINGS_TO_STRING,
    Edit,
    GoUnit,
    call_of,
    statements_of,
)
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-strings-builder"
STRING_FUNCTIONS = {
    "fmt": {"Sprint", "Sprintf", "Sprintln"},
    # Map returns a string too; that it runs its function argument does not matter here.
    "strings": {*STRINGS_TO_STRING, "Map"},
    "strconv": {"Itoa", "FormatInt", "FormatUint", "FormatFloat", "FormatBool", "Quote"},
}
FPRINT = {"Sprint": "Fprint", "Sprintf": "Fprintf", "Sprintln": "Fprintln"}


@dataclass(frozen=True)
class _Build:
    name: str
    declaration: Node
    value: Node | None
    loop: Node
    steps: tuple[Node, ...]  # the `name += part` assignment statements


def _appends(unit: GoUnit) -> dict[str, list[Node]]:
    found: dict[str, list[Node]] = {}
    for node in unit.function_nodes("assignment_statement"):
        operator = node.child_by_field_name("operator")
        left = node.child_by_field_name("left")
        if operator is None or unit.text(operator) != "+=" or left is None:
            continue
        if len(left.named_children) != 1 or left.named_children[0].type != "identifier":
            continue
        if unit.in_loop(node):
            found.setdefault(unit.text(left.named_children[0]), []).append(node)
    return found


def _builds(unit: GoUnit) -> list[_Build]:
    builds = []
    for name in _appends(unit):
        build = _build(unit, name)
        if build is not None:
            builds.append(build)
    return builds


def _build(unit: GoUnit, name: str) -> _Build | None:
    declarations = [d for d in _declarations(unit) if d[0] == name]
    if len(declarations) != 1:
        return None
    _, declaration, value, typed = declarations[0]
    if not typed and (value is None or not _is_string(unit, value)):
        return None
    holder = declaration.parent
    if holder is None or holder.type != "statement_list":
        return None
    siblings = statements_of(holder.parent) if holder.parent is not None else []
    if declaration not in siblings:
        return None
    later = siblings[siblings.index(declaration) + 1 :]
    loop = next((s for s in later if unit.uses(name, s)), None)
    if loop is None or _loop_of(loop) is None:
        return None
    steps = _only_appends(unit, name, loop)
    after = [n for n in unit.uses(name) if n.start_byte >= loop.end_byte]
    if steps is None or not after:
        return None
    return _Build(name, declaration, value, loop, steps)


def _loop_of(statement: Node) -> Node | None:
    if statement.type == "for_statement":
        return statement
    if statement.type == "labeled_statement":
        inner = [c for c in statement.named_children if c.type == "for_statement"]
        return inner[0] if inner else None
    return None


def _declarations(unit: GoUnit) -> list[tuple[str, Node, Node | None, bool]]:
    """(name, statement, value, declared as string) of every single-name declaration."""
    found: list[tuple[str, Node, Node | None, bool]] = []
    for node in unit.function_nodes("short_var_declaration", "var_declaration"):
        if node.type == "short_var_declaration":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None or len(left.named_children) != 1:
                continue
            value = right.named_children[0] if len(right.named_children) == 1 else None
            found.append((unit.text(left.named_children[0]), node, value, False))
            continue
        specs = [c for c in node.named_children if c.type == "var_spec"]
        if len(specs) != 1:
            continue
        names = specs[0].children_by_field_name("name")
        kind, value_list = (
            specs[0].child_by_field_name("type"),
            specs[0].child_by_field_name("value"),
        )
        if len(names) != 1:
            continue
        value = value_list.named_children[0] if value_list is not None else None
        typed = kind is not None and unit.text(kind) == "string"
        found.append((unit.text(names[0]), node, value, typed))
    return found


def _is_string(unit: GoUnit, node: Node) -> bool:
    if node.type in STRING_LITERALS:
        return True
    if node.type == "binary_expression":
        operator = node.child_by_field_name("operator")
        sides = [node.child_by_field_name("left"), node.child_by_field_name("right")]
        return (
            operator is not None
            and unit.text(operator) == "+"
            and any(s is not None and s.type in STRING_LITERALS for s in sides)
        )
    if node.type == "type_conversion_expression":
        kind = node.child_by_field_name("type")
        return kind is not None and unit.text(kind) == "string"
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        if function is not None and unit.text(function) == "string":
            return True
        parts = call_of(unit, node)
        if parts is None:
            return False
        operand, method, _ = parts
        return any(
            unit.package_name(package) == operand and method in methods
            for package, methods in STRING_FUNCTIONS.items()
        )
    return False


def _only_appends(unit: GoUnit, name: str, loop: Node) -> tuple[Node, ...] | None:
    steps = []
    for use in unit.uses(name, loop):
        left = use.parent
        statement = left.parent if left is not None else None
        if (
            left is None
            or statement is None
            or statement.type != "assignment_statement"
            or statement.child_by_field_name("left") != left
            or unit.text(statement.child_by_field_name("operator") or left) != "+="
            or not unit.in_loop(statement)
        ):
            return None
        steps.append(statement)
    return tuple(steps) if steps else None


def find(unit: GoUnit) -> Finding | None:
    builds = _builds(unit)
    if not builds:
        return None
    first = builds[0]
    return Finding(
        rule=RULE,
        cause="string_building",
        evidence=(
            f"`{unit.text(first.steps[0])}` in {unit.subject.bare_name} copies the whole "
            f"string {first.name} on every iteration of a loop"
        ),
    )


def propose(unit: GoUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    edits: list[Edit] = []
    taken: set[str] = set()
    for build in _builds(unit):
        builder = unit.fresh(f"{build.name}Builder", taken)
        taken.add(builder)
        indent = unit.indent(build.declaration)
        start = f"var {builder} strings.Builder"
        if build.value is not None and unit.text(build.value) not in ('""', "``"):
            start += f"\n{indent}{_write(unit, builder, build.value)}"
        edits.append(Edit(build.declaration.start_byte, build.declaration.end_byte, start))
        for step in build.steps:
            right = step.child_by_field_name("right")
            assert right is not None
            part = right.named_children[0]
            edits.append(Edit(step.start_byte, step.end_byte, _write(unit, builder, part)))
        restore = f"\n{indent}{build.name} := {builder}.String()"
        edits.append(Edit(build.loop.end_byte, build.loop.end_byte, restore))
    hypothesis = (
        f"{unit.subject.bare_name} grows a string with += in a loop, copying everything "
        "built so far on each iteration (quadratic); a strings.Builder appends in place and "
        "yields the same text."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis, imports=["strings"])


def _write(unit: GoUnit, builder: str, part: Node) -> str:
    parts = call_of(unit, part)
    if parts is not None:
        operand, method, _ = parts
        if operand == unit.package_name("fmt") and method in FPRINT:
            arguments = part.child_by_field_name("arguments")
            assert arguments is not None
            inner = unit.text(arguments)[1:-1]
            separator = ", " if inner.strip() else ""
            return f"{operand}.{FPRINT[method]}(&{builder}{separator}{inner})"
    return f"{builder}.WriteString({unit.text(part)})"
