"""go-sort-keys: a sort.Slice comparator that converts or parses both elements on every
comparison, given keys computed once per element instead.

    sort.Slice(x, func(i, j int) bool {
        return strings.ToLower(x[i].Name) < strings.ToLower(x[j].Name)
    })

calls ToLower twice per comparison: about 2·n·log2(n) calls (n = 10 000 makes ~270 000, each
allocating), where n calls give every key. The rewrite computes `keys[k]` for every k, then
sorts with `sort.Sort` on a small package-level type whose Less compares keys and whose Swap
swaps keys and x together.

Exactness. sort.Slice and sort.Sort run the same generated algorithm (`zsortfunc.go` and
`zsortinterface.go` are one template, pdqsort since Go 1.19), and sort.SliceStable and
sort.Stable likewise: given the same answers from Less they make the same swaps, so even an
unstable sort puts equal keys in the same order. Less gives the same answers when the key is a
pure function of the element alone, which the rule checks: the key expression reads the element
only as `x[i]` (its fields, map entries by literal, indexes), calls only standard functions
that neither write nor read state (strings, strconv, path, filepath, utf8, `len`, numeric and
string conversions), and names nothing else but package constants of this file. The sort must
make n ≥ 2 comparisons that touch every element before keys matter, so the keys are computed
only when len(x) > 1, as the sort would call Less only then.

Comparator forms: `return K(x[i]) < K(x[j])` (or `>`), and `a, b := K(x[i]), K(x[j])` or
`a, _ := strconv.Atoi(E(x[i]))` / `b, _ := strconv.Atoi(E(x[j]))` followed by `return a < b`.
A comparator with a tie-break, or one whose key calls no such standard function (a field read
directly, or only `len` and conversions, which cost about what filling and swapping a slice of
keys costs), is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import (
    STRINGS_TO_STRING,
    Edit,
    GoUnit,
    call_of,
    statements_of,
)
from speedproof.agents.heuristic.subject import Finding, Proposal, split_judged

RULE = "go-sort-keys"
SORTS = {"Slice": "Sort", "SliceStable": "Stable"}
HOLE = "\x00element\x00"
# Standard functions with no side effects and no hidden inputs, by package and result type.
PATHS = ("Base", "Ext", "Dir", "Clean")
PURE: dict[str, dict[str, str]] = {
    "strings": {
        **dict.fromkeys((*STRINGS_TO_STRING, "ToTitle"), "string"),
        **dict.fromkeys(
            ("Count", "Index", "LastIndex", "IndexByte", "IndexRune", "Compare"), "int"
        ),
        **dict.fromkeys(("Fields", "Split", "SplitN", "SplitAfter"), "[]string"),
    },
    "strconv": dict.fromkeys(("Itoa", "FormatInt", "FormatFloat", "Quote"), "string"),
    "path": dict.fromkeys(PATHS, "string"),
    "filepath": dict.fromkeys(PATHS, "string"),
    "utf8": {"RuneCountInString": "int"},
    "unicode": dict.fromkeys(("ToLower", "ToUpper"), "rune"),
}
# Functions whose first result is the key and whose second an error the comparator drops.
PAIRED = {
    ("strconv", "Atoi"): "int",
    ("strconv", "ParseInt"): "int64",
    ("strconv", "ParseUint"): "uint64",
    ("strconv", "ParseFloat"): "float64",
}
CONVERSIONS = ("int", "int64", "int32", "uint", "uint64", "float64", "float32", "string", "rune")
KEY_TYPES = ("string", "int", "int64", "uint64", "float64", "float32", "int32", "uint", "rune")
SAFE_NODES = (
    "selector_expression",
    "field_identifier",
    "index_expression",
    "slice_expression",
    "argument_list",
    "binary_expression",
    "unary_expression",
    "parenthesized_expression",
    "int_literal",
    "float_literal",
    "interpreted_string_literal",
    "interpreted_string_literal_content",
    "raw_string_literal",
    "raw_string_literal_content",
    "escape_sequence",
    "rune_literal",
    "call_expression",
    "identifier",
    "package_identifier",
)


@dataclass(frozen=True)
class _Key:
    """One comparator, read: what is sorted, the key of element HOLE, its type and order."""

    statement: Node  # the sort.Slice(...) statement
    sort: str  # "Sort" or "Stable"
    slice_text: str
    template: str  # the key expression with the element written HOLE
    kind: str  # the key's Go type
    paired: bool  # the key is the first of two results (an error is dropped)
    descending: bool


# -- reading a comparator -----------------------------------------------------------------


def _comparators(unit: GoUnit) -> list[tuple[Node, str, Node, Node]]:
    """(statement, sort.Slice or sort.SliceStable, slice expression, less literal) in order."""
    package = unit.package_name("sort")
    found = []
    for statement in unit.function_nodes("expression_statement"):
        call = statement.named_children[0] if statement.named_children else None
        parts = call_of(unit, call) if call is not None else None
        if parts is None or parts[0] != package or parts[1] not in SORTS or len(parts[2]) != 2:
            continue
        target, less = parts[2]
        if less.type == "func_literal" and _plain_slice(target):
            found.append((statement, parts[1], target, less))
    return found


def _plain_slice(node: Node) -> bool:
    """An identifier or a chain of field selectors on one: evaluating it twice is harmless."""
    if node.type == "identifier":
        return True
    operand = node.child_by_field_name("operand")
    return node.type == "selector_expression" and operand is not None and _plain_slice(operand)


def _indexes(unit: GoUnit, less: Node) -> tuple[str, str] | None:
    parameters = less.child_by_field_name("parameters")
    names = [
        unit.text(name)
        for declaration in (parameters.named_children if parameters else [])
        for name in declaration.children_by_field_name("name")
    ]
    return (names[0], names[1]) if len(names) == 2 else None


def _elements(unit: GoUnit, node: Node, element: str) -> list[Node]:
    """The index expressions in `node` that read `element` (`x[i]`), outermost first."""
    wanted = "".join(element.split())
    return [
        n
        for n in unit.walk(node)
        if n.type == "index_expression" and "".join(unit.text(n).split()) == wanted
    ]


def _template(unit: GoUnit, node: Node, element: str, index: str) -> str | None:
    """The text of `node` with each `element` written HOLE; None when the index is used any
    other way (a parallel slice, arithmetic on it) or the element is not read at all."""
    elements = _elements(unit, node, element)
    for use in unit.walk(node):
        named = use.type == "identifier" and unit.text(use) == index
        if named and not any(unit.inside(use, e) for e in elements):
            return None
    if not elements:
        return None
    pieces, position = [], node.start_byte
    for found in sorted(elements, key=lambda e: e.start_byte):
        pieces += [unit.data[position : found.start_byte].decode("utf-8"), HOLE]
        position = found.end_byte
    pieces.append(unit.data[position : node.end_byte].decode("utf-8"))
    return "".join(pieces)


def _sides(unit: GoUnit, less: Node, slice_text: str) -> tuple[Node, Node, str, bool] | str:
    """(left key, right key, operator, paired) of a comparator, or why it is not of a form the
    rule reads."""
    body = less.child_by_field_name("body")
    statements = statements_of(body) if body is not None else []
    last = statements[-1] if statements else None
    if last is None or last.type != "return_statement" or not last.named_children:
        return "the comparator does not end in one return"
    returned = last.named_children[0].named_children
    if len(returned) != 1 or returned[0].type != "binary_expression":
        return "the comparator does not return one comparison"
    comparison = returned[0]
    operator = comparison.child_by_field_name("operator")
    left, right = comparison.child_by_field_name("left"), comparison.child_by_field_name("right")
    if operator is None or left is None or right is None or unit.text(operator) not in ("<", ">"):
        return "the comparator does not return a < or > comparison"
    if len(statements) == 1:
        return left, right, unit.text(operator), False
    return _declared_sides(unit, statements[:-1], left, right, unit.text(operator))


def _declared_sides(
    unit: GoUnit, declarations: list[Node], left: Node, right: Node, operator: str
) -> tuple[Node, Node, str, bool] | str:
    """Keys declared before the return: `a, b := K(i), K(j)` or one declaration each."""
    values: dict[str, tuple[Node, bool]] = {}
    for statement in declarations:
        if statement.type != "short_var_declaration":
            return "the comparator does more than declare two keys and compare them (a tie-break)"
        names = statement.child_by_field_name("left")
        results = statement.child_by_field_name("right")
        if names is None or results is None:
            return "the comparator does more than declare two keys and compare them (a tie-break)"
        targets = [unit.text(n) for n in names.named_children]
        expressions = results.named_children
        if len(expressions) == 1 and len(targets) == 2 and targets[1] == "_":
            values[targets[0]] = (expressions[0], True)
        elif len(expressions) == len(targets):
            values.update({t: (e, False) for t, e in zip(targets, expressions, strict=True)})
        else:
            return "the comparator's declarations are not one key each"
    a, b = values.get(unit.text(left)), values.get(unit.text(right))
    if a is None or b is None or len(values) != 2 or a[1] != b[1]:
        return "the comparator compares something other than its two declared keys"
    return a[0], b[0], operator, a[1]


# -- what a key may be --------------------------------------------------------------------


def _pure(unit: GoUnit, node: Node, elements: list[Node]) -> str | None:
    """Why the key expression `node` may not be computed once per element, or None; the
    slice itself may be read only through `elements` (`x[i]`)."""
    for part in (n for n in unit.walk(node) if n.is_named):
        inside = any(unit.inside(part, e) for e in elements)
        if part.type not in SAFE_NODES:
            return f"the key uses `{unit.text(part)}`, which the rule does not evaluate"
        if part.type == "call_expression" and not _pure_call(unit, part):
            return f"the key calls `{unit.text(part)}`, which may have effects or hidden inputs"
        if part.type == "identifier" and not (inside or _allowed_name(unit, part)):
            return f"the key reads `{unit.text(part)}`, which may change while sorting"
    return None


def _pure_call(unit: GoUnit, call: Node) -> bool:
    function = call.child_by_field_name("function")
    if function is None:
        return False
    if function.type == "identifier":
        return unit.text(function) in ("len", *CONVERSIONS)
    parts = call_of(unit, call)
    return parts is not None and _qualified(unit, parts[0], parts[1]) is not None


def _library_call(unit: GoUnit, node: Node) -> bool:
    """A call of one of the standard functions of PURE or PAIRED (not len or a conversion)."""
    parts = call_of(unit, node) if node.type == "call_expression" else None
    return parts is not None and _qualified(unit, parts[0], parts[1]) is not None


def _qualified(unit: GoUnit, operand: str, name: str) -> str | None:
    """The result type of the standard function `operand.name`, when it is a known pure one."""
    for package, functions in PURE.items():
        path = {"filepath": "path/filepath", "utf8": "unicode/utf8"}.get(package, package)
        if operand == (unit.package_name(path) or package) and name in functions:
            return functions[name]
    for (package, function), kind in PAIRED.items():
        if operand == (unit.package_name(package) or package) and name == function:
            return kind
    return None


def _allowed_name(unit: GoUnit, identifier: Node) -> bool:
    parent = identifier.parent
    call = parent.parent if parent is not None else None
    if (
        parent is not None
        and call is not None
        and parent.type == "selector_expression"
        and parent.child_by_field_name("operand") == identifier
        and call.type == "call_expression"
        and call.child_by_field_name("function") == parent
    ):
        return True  # a package qualifier, checked by _pure_call
    name = unit.text(identifier)
    if name in ("len", *CONVERSIONS):
        return True
    return unit.whole_file and unit.package_constant(name) is not None


def _kind(unit: GoUnit, node: Node, paired: bool) -> str | None:
    """The Go type of the key expression `node`, read from its outermost call."""
    if node.type == "parenthesized_expression" and node.named_children:
        return _kind(unit, node.named_children[0], paired)
    if node.type == "index_expression":
        operand = node.child_by_field_name("operand")
        inner = _kind(unit, operand, False) if operand is not None else None
        return "string" if inner == "[]string" and not paired else None
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    if function is not None and function.type == "identifier":
        name = unit.text(function)
        return None if paired else ("int" if name == "len" else name)
    parts = call_of(unit, node)
    if parts is None:
        return None
    is_paired = any(parts[0] == (unit.package_name(p) or p) and parts[1] == f for p, f in PAIRED)
    kind = _qualified(unit, parts[0], parts[1])
    return kind if is_paired == paired else None


def _key(unit: GoUnit, found: tuple[Node, str, Node, Node]) -> _Key | str:
    statement, method, target, less = found
    slice_text = unit.text(target)
    indexes = _indexes(unit, less)
    if indexes is None:
        return "the comparator does not take two indexes"
    sides = _sides(unit, less, slice_text)
    if isinstance(sides, str):
        return sides
    left, right, operator, paired = sides
    i, j = indexes
    template = _template(unit, left, f"{slice_text}[{i}]", i)
    if template is None or _template(unit, right, f"{slice_text}[{j}]", j) != template:
        return (
            f"the two sides of the comparison are not one key of {slice_text}[{i}] and "
            f"{slice_text}[{j}]"
        )
    problem = _pure(unit, left, _elements(unit, left, f"{slice_text}[{i}]"))
    if problem is not None:
        return problem
    if not any(_library_call(unit, n) for n in unit.walk(left)):
        # len() and conversions cost about what a slice of keys costs to fill and swap.
        return (
            f"the key `{unit.text(left)}` is read directly or cheaply: nothing costly is recomputed"
        )
    kind = _kind(unit, left, paired)
    if kind not in KEY_TYPES:
        return f"the type of the key `{unit.text(left)}` cannot be told from its outermost call"
    return _Key(statement, SORTS[method], slice_text, template, kind, paired, operator == ">")


def _keys(unit: GoUnit) -> tuple[list[_Key], list[str]]:
    return split_judged(_key(unit, found) for found in _comparators(unit))


# -- the rule ------------------------------------------------------------------------------


def find(unit: GoUnit) -> Finding | None:
    keys, _ = _keys(unit)
    if not keys:
        return None
    first = keys[0]
    return Finding(
        rule=RULE,
        cause="repeated_work",
        evidence=(
            f"the comparator of sort.{'Slice' if first.sort == 'Sort' else 'SliceStable'} in "
            f"{unit.subject.bare_name} computes "
            f"`{first.template.replace(HOLE, first.slice_text + '[i]')}` for "
            "both elements on every comparison, about 2·n·log2(n) times"
        ),
    )


def explain(unit: GoUnit) -> str | None:
    keys, problems = _keys(unit)
    if keys:
        return None
    return problems[0] if problems else None


def propose(unit: GoUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    keys, _ = _keys(unit)
    edits: list[Edit] = []
    preamble: list[str] = []
    types: dict[tuple[str, bool], str] = {}
    taken: set[str] = set()
    sort = unit.package_name("sort") or "sort"
    for key in keys:
        signature = (key.kind, key.descending)
        if signature not in types:
            base = key.kind.replace("[]", "") + ("KeysDescending" if key.descending else "Keys")
            types[signature] = unit.fresh(base, taken)
            taken.add(types[signature])
            preamble.extend([*([""] if preamble else []), *_sorter(types[signature], key)])
        names = {base: unit.fresh(base, taken) for base in ("keys", "k", "a", "b")}
        taken.update(names.values())
        replacement = _replacement(unit, key, names, types[signature], sort)
        edits.append(Edit(key.statement.start_byte, key.statement.end_byte, replacement))
    hypothesis = (
        f"the sort comparator in {unit.subject.bare_name} converts both elements on every "
        "comparison (about 2·n·log2(n) conversions); computing each element's key once and "
        "sorting keys and elements together with the same algorithm makes n."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis, preamble=preamble)


def _sorter(name: str, key: _Key) -> list[str]:
    order = ">" if key.descending else "<"
    return [
        f"// {name} sorts keys, and the slice they were computed from in step with them.",
        f"type {name} struct {{",
        f"\tkeys []{key.kind}",
        "\tswap func(i, j int)",
        "}",
        "",
        f"func (s {name}) Len() int {{ return len(s.keys) }}",
        f"func (s {name}) Less(i, j int) bool {{ return s.keys[i] {order} s.keys[j] }}",
        f"func (s {name}) Swap(i, j int) {{",
        "\ts.keys[i], s.keys[j] = s.keys[j], s.keys[i]",
        "\ts.swap(i, j)",
        "}",
    ]


def _replacement(unit: GoUnit, key: _Key, names: dict[str, str], kind: str, sort: str) -> str:
    x, keys, k, a, b = key.slice_text, names["keys"], names["k"], names["a"], names["b"]
    element = key.template.replace(HOLE, f"{x}[{k}]")
    assign = f"{keys}[{k}], _ = {element}" if key.paired else f"{keys}[{k}] = {element}"
    indent = unit.indent(key.statement)
    lines = [
        f"if len({x}) > 1 {{",
        f"\t{keys} := make([]{key.kind}, len({x}))",
        f"\tfor {k} := range {x} {{",
        f"\t\t{assign}",
        "\t}",
        f"\t{sort}.{key.sort}({kind}{{{keys}, func({a}, {b} int) {{ "
        f"{x}[{a}], {x}[{b}] = {x}[{b}], {x}[{a}] }}}})",
        "}",
    ]
    return ("\n" + indent).join(lines)
