"""go-hoist-regexp: a regular expression compiled inside a function, compiled once per process.

`regexp.MustCompile(P)` parses P and builds its program on every call (Go has no cache): tens
of microseconds and several allocations, per log line when the function runs per line. A
package-level `var` compiles it once. *regexp.Regexp is safe for concurrent use, so sharing one
is correct; the rule declines when the function calls `Longest()`, the one method that changes
a Regexp.

Forms, each exact:

* `name := regexp.MustCompile(P)` alone on its line, name declared once and assigned nowhere
  else, used nowhere else in the file: the line moves to package level as `var name = ...`.
* any other `regexp.MustCompile(P)`: the call becomes a package-level var.
* `regexp.Compile(P)` as the whole right-hand side or the only argument: the call becomes
  `v, vErr` of a package-level `var v, vErr = regexp.Compile(P)` (the same values, the error
  included). Not in a `return`: the caller would then share the Regexp.
* `regexp.MatchString(P, s)` / `regexp.Match(P, b)`: a package-level pair and a small function
  doing what the library function does (return the compile error, else match).

P must be a string literal or a package-level string constant of this file. MustCompile at
package level panics at start-up where the original panicked at the first call; a function hot
enough to be profiled has made that call, so its pattern compiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import STRING_LITERALS, Edit, GoUnit, call_of
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-hoist-regexp"
MUST = ("MustCompile", "MustCompilePOSIX")
COMPILE = ("Compile", "CompilePOSIX")
MATCH = {"MatchString": "string", "Match": "[]byte"}
DECLARING_PARENTS = ("var_spec", "parameter_declaration", "const_spec", "range_clause")


@dataclass(frozen=True)
class _Site:
    call: Node
    method: str
    pattern: str
    rest: tuple[Node, ...]
    certain: bool


def _sites(unit: GoUnit) -> list[_Site]:
    package = unit.package_name("regexp")
    if package is None:
        return []
    sites = []
    for node in unit.function_nodes("call_expression"):
        parts = call_of(unit, node)
        if parts is None:
            continue
        operand, method, args = parts
        if method == "Longest":
            return []
        if operand != package:
            continue
        wanted = 2 if method in MATCH else 1
        if method not in (*MUST, *COMPILE, *MATCH) or len(args) != wanted:
            continue
        pattern = _pattern(unit, args[0])
        if pattern is None:
            continue
        literal, certain = pattern
        sites.append(_Site(node, method, literal, tuple(args[1:]), certain))
    return sites


def _pattern(unit: GoUnit, node: Node) -> tuple[str, bool] | None:
    if node.type in STRING_LITERALS:
        return unit.text(node), True
    if node.type == "identifier":
        name = unit.text(node)
        if not unit.whole_file:
            return name, False
        if unit.package_constant(name) is not None:
            return name, True
    return None


def find(unit: GoUnit) -> Finding | None:
    sites = _sites(unit)
    if not sites:
        return None
    return Finding(
        rule=RULE,
        cause="repeated_work",
        evidence=(
            f"`{unit.text(sites[0].call)}` in {unit.subject.bare_name} compiles the pattern on "
            f"every call ({len(sites)} compilation{'s' if len(sites) > 1 else ''} a call)"
        ),
        certain=all(site.certain for site in sites),
    )


def propose(unit: GoUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not finding.certain or not unit.whole_file:
        return None
    package = unit.package_name("regexp") or "regexp"
    edits: list[Edit] = []
    preamble: list[str] = []
    hoisted: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for site in _sites(unit):
        moved = _moved_declaration(unit, site, package)
        if moved is not None:
            edit, declaration = moved
            edits.append(edit)
            preamble.append(declaration)
            continue
        kind = "must" if site.method in MUST else "compile"
        key = (kind + site.method, site.pattern)
        if key not in hoisted:
            name = unit.fresh(f"{unit.subject.bare_name}Pattern", taken)
            taken.update({name, name + "Err", name + site.method})
            hoisted[key] = name
            preamble.extend(_declarations(site, name, package))
        replacement = _replacement(unit, site, hoisted[key])
        if replacement is None:
            return None
        edits.append(Edit(site.call.start_byte, site.call.end_byte, replacement))
    hypothesis = (
        f"{unit.subject.bare_name} compiles a regular expression on every call "
        f"(`{unit.text(_sites(unit)[0].call)}`), parsing the pattern and allocating a new "
        "program each time; compiled once at package level, each call only matches."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis, preamble=preamble)


def _declarations(site: _Site, name: str, package: str) -> list[str]:
    if site.method in MUST:
        return [f"var {name} = {package}.{site.method}({site.pattern})"]
    base = "CompilePOSIX" if site.method == "CompilePOSIX" else "Compile"
    pair = f"var {name}, {name}Err = {package}.{base}({site.pattern})"
    if site.method in COMPILE:
        return [pair]
    kind = MATCH[site.method]
    return [
        pair,
        "",
        f"func {name}{site.method}(input {kind}) (bool, error) {{",
        f"\tif {name}Err != nil {{",
        f"\t\treturn false, {name}Err",
        "\t}",
        f"\treturn {name}.{site.method}(input), nil",
        "}",
    ]


def _replacement(unit: GoUnit, site: _Site, name: str) -> str | None:
    if site.method in MUST:
        return name
    if site.method in MATCH:
        return f"{name}{site.method}({unit.text(site.rest[0])})"
    parent = site.call.parent
    if parent is None or len(parent.named_children) != 1:
        return None
    holder = parent.parent
    if parent.type == "argument_list" or (
        parent.type == "expression_list"
        and holder is not None
        and holder.type in ("short_var_declaration", "assignment_statement")
        and holder.child_by_field_name("right") == parent
    ):
        return f"{name}, {name}Err"
    return None


def _moved_declaration(unit: GoUnit, site: _Site, package: str) -> tuple[Edit, str] | None:
    """The edit deleting `name := regexp.MustCompile(P)` and its package-level replacement."""
    if site.method not in MUST:
        return None
    right = site.call.parent
    declaration = right.parent if right is not None else None
    if (
        right is None
        or declaration is None
        or declaration.type != "short_var_declaration"
        or len(right.named_children) != 1
    ):
        return None
    left = declaration.child_by_field_name("left")
    if left is None or len(left.named_children) != 1:
        return None
    name = unit.text(left.named_children[0])
    if not _declared_once(unit, name, declaration):
        return None
    line = unit.statement_line(declaration)
    if line is None:
        return None
    return Edit(line[0], line[1], ""), f"var {name} = {package}.{site.method}({site.pattern})"


def _declared_once(unit: GoUnit, name: str, declaration: Node) -> bool:
    """`name` is declared only by `declaration`, never assigned, used only after it, and is not
    a name anywhere else in the file (so it is free at package level, as far as one file
    shows)."""
    uses = unit.uses(name)
    everywhere = [
        n for n in unit.walk(unit.tree.root_node) if n.type == "identifier" and unit.text(n) == name
    ]
    if len(everywhere) != len(uses):
        return False
    for use in uses:
        if unit.inside(use, declaration):
            continue
        if use.start_byte < declaration.end_byte:
            return False
        parent = use.parent
        if parent is None or parent.type in DECLARING_PARENTS:
            return False
        holder = parent.parent
        if (
            parent.type == "expression_list"
            and holder is not None
            and (
                holder.type in ("short_var_declaration", "assignment_statement")
                and holder.child_by_field_name("left") == parent
            )
        ):
            return False
    return True
