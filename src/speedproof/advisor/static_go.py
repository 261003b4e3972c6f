"""Structural detectors of the seven causes in a Go function (tree-sitter facts).

Weights as in `static_py`: 1.0 for the pattern itself, less for a pattern that is often
harmless. A write to os.Stdout costs one write system call (os.Stdout is unbuffered in Go), so
it weighs 1.0 in a loop and 0.5 outside one (a hot function that writes once is usually called
once per item).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from speedproof.advisor.gofacts import GoCall, GoFacts, GoLoop, constant
from speedproof.advisor.sites import Evidence, at, nested_loops
from speedproof.advisor.static_py import unknown_destinations

FORMATTERS = frozenset({"fmt.Sprintf", "fmt.Sprint", "fmt.Sprintln"})
SPLITTERS = frozenset({"strings.Split", "strings.SplitN", "strings.Fields", "bytes.Split"})
SEARCHES = frozenset(
    {"strings.Contains", "strings.Index", "slices.Contains", "slices.Index", "bytes.Contains"}
)
COMPILES = frozenset({"regexp.MustCompile", "regexp.Compile", "template.Must", "time.LoadLocation"})
PURE_CALLS = frozenset(
    {
        "strings.ToLower",
        "strings.ToUpper",
        "strings.TrimSpace",
        "strings.Split",
        "strings.Fields",
        "strings.Replace",
        "strings.ReplaceAll",
        "strings.Repeat",
        "strings.Join",
        "strconv.Itoa",
        "strconv.Atoi",
        "strconv.FormatInt",
        "sort.Strings",
        "sort.Ints",
        "fmt.Sprintf",
        "fmt.Sprint",
        "json.Marshal",
    }
)
REGEX_LITERAL = frozenset({"regexp.MatchString", "regexp.MustCompile", "regexp.Compile"})
REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")
SINGLE_VERB = re.compile(r'^"%[dsv]"$')
STRING_LITERALS = ("interpreted_string_literal", "raw_string_literal")


def _literal_content(facts: GoFacts, node: Node) -> str | None:
    if node.type not in STRING_LITERALS:
        return None
    return facts.text(node)[1:-1]


def allocation(f: GoFacts) -> list[Evidence]:
    found = [
        Evidence(f"{s.text[:40]} copies on every iteration ({at(s.line)})", 0.7)
        for s in f.conversions
        if s.in_loop
    ]
    for call in f.calls:
        if call.name in FORMATTERS:
            weight = 0.7 if call.in_loop else 0.4
            found.append(
                Evidence(f"{call.text[:40]} allocates a new string ({at(call.line)})", weight)
            )
        elif call.in_loop and call.name in SPLITTERS:
            found.append(Evidence(f"{call.text[:40]} allocates a slice on every iteration", 0.5))
        elif call.in_loop and call.name in ("make", "new"):
            found.append(Evidence(f"{call.text[:40]} allocates on every iteration", 0.7))
    for literal in f.literals:
        if not literal.in_loop:
            continue
        body = literal.node.child_by_field_name("body")
        items = body.named_children if body is not None else []
        if items and all(_constant_element(f, item) for item in items):
            found.append(
                Evidence(f"constant literal {literal.text[:40]} is rebuilt on every iteration")
            )
    return found


def _constant_element(f: GoFacts, node: Node) -> bool:
    if node.type == "literal_element":
        return all(_constant_element(f, child) for child in node.named_children)
    if node.type == "keyed_element":
        return all(_constant_element(f, child) for child in node.named_children)
    return constant(f, node)


def unbuffered_io(f: GoFacts) -> list[Evidence]:
    found = []
    sites = f.io_sites()
    for site in sites:
        if site.destination != "real":
            continue
        weight = 1.0 if site.in_loop else 0.5
        where = "in a loop" if site.in_loop else "once per call"
        found.append(Evidence(f"{site.call[:50]} {where}: {site.why} ({at(site.line)})", weight))
    return found + unknown_destinations(sites)


def _stringy(f: GoFacts, node: Node | None) -> bool:
    if node is None:
        return False
    text = f.text(node)
    return (
        node.type in STRING_LITERALS
        or any(child.type in STRING_LITERALS for child in f.walk(node))
        or text.startswith(("string(", "fmt.Sprint", "strconv."))
    )


def string_building(f: GoFacts) -> list[Evidence]:
    return [
        Evidence(f"{u.target} is grown by concatenation in a loop: {u.text[:50]} ({at(u.line)})")
        for u in f.updates
        if u.in_loop and (f.is_string(u.target) or _stringy(f, u.value))
    ]


def fast_path(f: GoFacts) -> list[Evidence]:
    found = []
    for call in f.calls:
        first = call.args[0] if call.args else None
        pattern = _literal_content(f, first) if first is not None else None
        if call.name in REGEX_LITERAL and pattern is not None and not REGEX_SPECIAL.search(pattern):
            found.append(
                Evidence(
                    f"regular expression {pattern!r} has no special characters: the strings "
                    f"package does the same ({at(call.line)})"
                )
            )
        elif call.name == "fmt.Sprintf" and first is not None and len(call.args) == 2:
            if SINGLE_VERB.match(f.text(first)):
                found.append(Evidence(f"{call.text[:40]} formats one value: strconv does it"))
        elif call.name == "fmt.Sprint" and len(call.args) == 1:
            found.append(Evidence(f"{call.text[:40]} formats one value: strconv does it", 0.7))
    body = f.text(f.function)
    if re.search(r"strings\.ToLower\([^()]*\)\s*==\s*strings\.ToLower\(", body):
        found.append(Evidence("two strings lowered to compare them: strings.EqualFold"))
    for match in re.finditer(r"(?:len\()?strings\.Split\w*\([^()]*\)\)?(\[\d+\])?", body):
        text = match.group(0)
        if text.startswith("len(") or match.group(1):
            found.append(Evidence(f"{text[:40]} splits everything for one part or a count", 0.7))
    return found


def superlinear(f: GoFacts) -> list[Evidence]:
    found = nested_loops(f.loops)
    for call in f.calls:
        if not call.in_loop:
            continue
        if call.name in SEARCHES:
            found.append(Evidence(f"{call.text[:40]} searches linearly inside a loop", 0.5))
        elif (
            call.name == "append"
            and call.args
            and call.args[0].type
            in (
                "composite_literal",
                "slice_expression",
            )
        ):
            found.append(Evidence(f"{call.text[:40]} shifts every element ({at(call.line)})"))
    return found


def _fresh_slice(f: GoFacts, name: str) -> str | None:
    """How `name` was declared when it starts empty with no capacity, else None."""
    for declared in f.declared.get(name, []):
        value = declared.value
        if value is None and declared.type is not None and declared.type.startswith("[]"):
            return f"var {name} {declared.type}"
        if value is None:
            continue
        text = f.text(value)
        if value.type == "call_expression" and text.startswith("make([]"):
            arguments = value.child_by_field_name("arguments")
            if arguments is not None and len(arguments.named_children) == 2:
                return text
        if value.type == "composite_literal" and text.startswith("[]") and text.endswith("{}"):
            return text
    return None


def _fresh_map(f: GoFacts, name: str) -> str | None:
    for declared in f.declared.get(name, []):
        value = declared.value
        if value is None:
            continue
        text = f.text(value)
        if text.startswith("make(map[") and "," not in text.split("]", 1)[1]:
            return text
        if text.startswith("map[") and text.endswith("{}"):
            return text
    return None


def _direct(loop: GoLoop, node: Node) -> bool:
    """The statement sits directly in the loop's body (not under an if or a nested block)."""
    parent = node.parent
    while parent is not None and parent.type in ("statement_list", "expression_statement"):
        if parent.parent is not None and parent.parent.parent == loop.node:
            return True
        parent = parent.parent
    return False


def preallocation(f: GoFacts) -> list[Evidence]:
    found = []
    for grow in f.appends:
        if not grow.in_loop or grow.loops[-1].kind != "range":
            continue
        declared = _fresh_slice(f, grow.target)
        if declared is None:
            continue
        loop = grow.loops[-1]
        # Under a condition the final size is only bounded, not known: weak evidence.
        weight = 1.0 if _direct(loop, grow.node) else 0.25
        found.append(
            Evidence(
                f"{grow.target} ({declared}) grows by append inside the range over "
                f"{loop.iterable[:30]}: its size is bounded by len({loop.iterable[:30]}) "
                f"({at(grow.line)})",
                weight,
            )
        )
    for store in f.stores:
        if not store.in_loop or store.loops[-1].kind != "range":
            continue
        name = store.text.split("[", 1)[0].strip()
        declared = _fresh_map(f, name)
        if declared is not None:
            found.append(
                Evidence(f"map {name} ({declared}) fills in a range loop without a size", 0.6)
            )
    return found


def _invariant_call(call: GoCall, f: GoFacts) -> bool:
    loop = call.loops[-1]
    return bool(call.args) and all(f.invariant(arg, loop) for arg in call.args)


def repeated_work(f: GoFacts) -> list[Evidence]:
    found = []
    for call in f.calls:
        if call.name in COMPILES:
            found.append(Evidence(f"{call.text[:40]} is compiled on every call ({at(call.line)})"))
        elif call.in_loop and call.name in PURE_CALLS and _invariant_call(call, f):
            found.append(
                Evidence(
                    f"{call.text[:40]} is computed again on every iteration from the same "
                    f"input ({at(call.line)})"
                )
            )
    return found


DETECTORS: dict[str, Callable[[GoFacts], list[Evidence]]] = {
    "allocation": allocation,
    "unbuffered_io": unbuffered_io,
    "string_building": string_building,
    "fast_path": fast_path,
    "superlinear": superlinear,
    "preallocation": preallocation,
    "repeated_work": repeated_work,
}
