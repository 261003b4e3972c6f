"""py-cmp-to-key: a sort by `functools.cmp_to_key(compare)` whose comparator parses both items
on every comparison, given the key the comparator compares instead.

    def by_version(a, b):
        ka = tuple(int(p) for p in a.split("."))
        kb = tuple(int(p) for p in b.split("."))
        if ka < kb:
            return -1
        ...
    releases.sort(key=functools.cmp_to_key(by_version))

parses two version strings per comparison: about n·log2(n) comparator calls (n = 10 000 makes
~130 000, each a Python call and two parses), where `key=lambda a: tuple(int(p) for p in
a.split("."))` parses each item once.

Exactness. list.sort and sorted ask only `<` of the key objects; cmp_to_key's `<` is
`compare(a, b) < 0`. So the rewrite keeps every answer, and with them the order (ties and the
stable order of equal items included), when `compare(a, b) < 0` is exactly `K(a) < K(b)` for a
pure K:

* `if K(a) < K(b): return -1` as the first branch (or `-1 if K(a) < K(b) else ...`), every
  other branch returning 0 or more: exact for any K;
* the negative branch after `if K(a) > K(b): return 1` or `==` branches, or
  `return (K(a) > K(b)) - (K(a) < K(b))`: exact when K's type never makes both `<` and `>`
  true (numbers, text and sequences of them, read from K's outermost builtin call);
* `return K(a) - K(b)`: exact for numbers (the sign of a difference is the order).

A descending comparator (`K(a) > K(b)` first) becomes `key=lambda a: -(K(a))` for numbers
(the same answers, NaN included) and `reverse=True` for text (a stable sort of a strict order
has one result). K is pure when it reads only its parameter, module-level names and literals,
and calls only computing builtins (int, float, str, len, tuple, ...) and methods with the names
of str's computing methods (split, strip, lower, ...), which the rule takes to be str's: an
object of another type with such a method and effects would be missed, and the tests and the
behaviour gate cover it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment

from speedproof.agents.heuristic.py_edit import function_proposal
from speedproof.agents.heuristic.py_facts import (
    STR_METHODS,
    TEXT_METHODS,
    PyUnit,
    Replacement,
    first_effect,
    literal_value,
    plain_parameters,
    read_names,
    replace_nodes,
)
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "py-cmp-to-key"
NUMBER_BUILTINS = ("int", "float", "len", "ord")
PURE_BUILTINS = (*NUMBER_BUILTINS, "abs", "round", "str", "tuple", "list", "min", "max", "bool")
REFUSED = (cst.Lambda, cst.NamedExpr, cst.Yield, cst.Await, cst.FormattedString, cst.StarredElement)
FLIP = {"<": ">", ">": "<", "==": "=="}
OPERATORS = {cst.LessThan: "<", cst.GreaterThan: ">", cst.Equal: "=="}
HOLE = "_speedproof_item_"


@dataclass(frozen=True)
class _Key:
    parameter: str
    key: cst.BaseExpression  # K of `parameter`, the comparator's locals written out
    descending: bool
    kind: str | None  # "number", "text", "sequence", or None when it cannot be told


@dataclass(frozen=True)
class _Site:
    sort: cst.Call
    argument: cst.Arg  # key=cmp_to_key(...)
    key: _Key


Decision = tuple[cst.Comparison, str | None]  # the comparison cmp < 0 is, and the type it needs


# -- the sorts -----------------------------------------------------------------------------


def _comparator_of(unit: PyUnit, call: cst.Call) -> tuple[cst.Arg, cst.BaseExpression] | None:
    """(the key= argument, the comparator) of `sorted(..., key=cmp_to_key(C))` or
    `x.sort(key=cmp_to_key(C))`."""
    func = call.func
    is_sort = (isinstance(func, cst.Name) and func.value == "sorted" and unit.is_builtin(func)) or (
        isinstance(func, cst.Attribute) and func.attr.value == "sort"
    )
    arg = next((a for a in call.args if a.keyword and a.keyword.value == "key"), None)
    if not is_sort or arg is None or not isinstance(arg.value, cst.Call):
        return None
    wrapper = arg.value
    if len(wrapper.args) != 1 or wrapper.args[0].keyword or wrapper.args[0].star:
        return None
    return (arg, wrapper.args[0].value) if _is_cmp_to_key(unit, wrapper.func) is not False else None


def _is_cmp_to_key(unit: PyUnit, func: cst.BaseExpression) -> bool | None:
    """True for functools.cmp_to_key; None when it cannot be told without the file."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        if func.attr.value != "cmp_to_key":
            return False
        return unit.is_module_import(func.value, "functools")
    if not isinstance(func, cst.Name) or func.value != "cmp_to_key":
        return False
    found = unit.referents(func)
    if not found:
        return None if not unit.whole_file else False
    binding = next(iter(found))
    node = binding.node if isinstance(binding, Assignment) else None
    return (
        len(found) == 1
        and isinstance(node, cst.ImportFrom)
        and isinstance(node.module, cst.Name)
        and node.module.value == "functools"
    )


# -- reading a comparator ------------------------------------------------------------------


def _comparator(unit: PyUnit, node: cst.BaseExpression) -> _Key | str:
    if isinstance(node, cst.Lambda):
        parameters = plain_parameters(node)
        if parameters is None or len(parameters) != 2:
            return "the comparator lambda does not take two plain parameters"
        return _keyed(unit, _decision_of(node.body), (parameters[0], parameters[1]), {})
    if not isinstance(node, cst.Name):
        return f"the comparator `{unit.code(node)}` is neither a lambda nor a function's name"
    function = unit.module_function(node)
    if isinstance(function, str):
        return function
    parameters = plain_parameters(function)
    if function.decorators or parameters is None or len(parameters) != 2:
        return f"{node.value} is decorated or does not take two plain parameters"
    statements = _body(function)
    if isinstance(statements, str):
        return f"{node.value}: {statements}"
    local, logic = statements
    return _keyed(unit, _decision(logic), (parameters[0], parameters[1]), local)


def _body(
    function: cst.FunctionDef,
) -> tuple[dict[str, cst.BaseExpression], list[cst.CSTNode]] | str:
    """The comparator's leading local assignments (name -> value, earlier ones written out)
    and the statements after them."""
    body = function.body
    lines: list[cst.CSTNode] = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    local: dict[str, cst.BaseExpression] = {}
    for index, line in enumerate(lines):
        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString) and index == 0:
            continue
        if not isinstance(small, cst.Assign) or len(line.body) != 1:  # type: ignore[attr-defined]
            return local, lines[index:]
        if not _assign(small, local):
            return "its assignments are not plain names bound once"
    return "it has no return statement"


def _assign(assign: cst.Assign, local: dict[str, cst.BaseExpression]) -> bool:
    if len(assign.targets) != 1:
        return False
    target, value = assign.targets[0].target, assign.value
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target, value)]
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple):
        if len(target.elements) != len(value.elements):
            return False
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]
    for name, expression in pairs:
        if not isinstance(name, cst.Name) or name.value in local:
            return False
        local[name.value] = _written_out(expression, local)
    return True


def _decision(statements: list[cst.CSTNode]) -> Decision | str:
    """What `compare(a, b) < 0` is, read from if/elif/return statements."""
    chain = _chain(statements)
    if isinstance(chain, str):
        return chain
    if len(chain[0]) == 0:
        return _decision_of(chain[1])
    return _from_branches(*chain)


Branches = tuple[list[tuple[cst.BaseExpression, cst.BaseExpression]], cst.BaseExpression]


def _chain(statements: list[cst.CSTNode]) -> Branches | str:
    """[(condition, returned value)] and the value returned when no condition holds."""
    branches: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    rest = list(statements)
    while rest:
        statement = rest.pop(0)
        returned = _returned([statement])
        if returned is not None:
            return (branches, returned) if not rest else "it has code after its last return"
        if not isinstance(statement, cst.If):
            return "its body is not if/elif branches that each return"
        value = _returned(_lines(statement.body))
        if value is None:
            return "an if branch does more than return"
        branches.append((statement.test, value))
        if isinstance(statement.orelse, cst.If):
            rest.insert(0, statement.orelse)
        elif isinstance(statement.orelse, cst.Else):
            rest = _lines(statement.orelse.body) + rest
    return "it can end without returning"


def _lines(block: cst.BaseSuite) -> list[cst.CSTNode]:
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=block.body)]
    return list(block.body)


def _returned(statements: list[cst.CSTNode]) -> cst.BaseExpression | None:
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return None
    small = statements[0].body
    if len(small) != 1 or not isinstance(small[0], cst.Return) or small[0].value is None:
        return None
    return small[0].value


def _decision_of(expression: cst.BaseExpression) -> Decision | str:
    """What `compare(a, b) < 0` is for a comparator returning `expression`."""
    if isinstance(expression, cst.IfExp):
        branches: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        while isinstance(expression, cst.IfExp):
            branches.append((expression.test, expression.body))
            expression = expression.orelse
        return _from_branches(branches, expression)
    if isinstance(expression, cst.BinaryOperation) and isinstance(
        expression.operator, cst.Subtract
    ):
        left, right = expression.left, expression.right
        if isinstance(left, cst.Comparison) and isinstance(right, cst.Comparison):
            # (K(a) > K(b)) - (K(a) < K(b)) is negative exactly when the right one holds.
            return (right, "consistent") if _flipped(left, right) else "the two tests differ"
        comparison = cst.Comparison(
            left=left, comparisons=[cst.ComparisonTarget(cst.LessThan(), right)]
        )
        return comparison, "number"
    return f"it returns `{cst.Module([]).code_for_node(expression)}`, not a comparison of keys"


def _flipped(left: cst.Comparison, right: cst.Comparison) -> bool:
    a, b = _relation(left), _relation(right)
    code = cst.Module([]).code_for_node
    return (
        a is not None
        and b is not None
        and code(a[0]) == code(b[0])
        and code(a[2]) == code(b[2])
        and a[1] == FLIP[b[1]]
        and a[1] != "=="
    )


def _relation(
    node: cst.BaseExpression,
) -> tuple[cst.BaseExpression, str, cst.BaseExpression] | None:
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    operator = OPERATORS.get(type(target.operator))
    return None if operator is None else (node.left, operator, target.comparator)


def _from_branches(
    branches: list[tuple[cst.BaseExpression, cst.BaseExpression]], default: cst.BaseExpression
) -> Decision | str:
    values = [_integer(value) for _, value in branches]
    last = _integer(default)
    if last is None or any(v is None for v in values):
        return "it returns something other than integer literals"
    negative = [i for i, v in enumerate(values) if v is not None and v < 0]
    if last < 0 or len(negative) != 1:
        return "it has other than one branch returning a negative number"
    chosen = branches[negative[0]][0]
    relation = _relation(chosen)
    if not isinstance(chosen, cst.Comparison) or relation is None or relation[1] == "==":
        return "its negative branch is not one < or > comparison"
    if negative[0] == 0:
        return chosen, None
    earlier = [test for test, _ in branches[: negative[0]]]
    if all(_disjoint(test, chosen) for test in earlier):
        return chosen, "consistent"
    return "a branch before the negative one may hold together with it"


def _disjoint(test: cst.BaseExpression, chosen: cst.Comparison) -> bool:
    """`test` compares the same two keys as `chosen` by a relation that excludes it."""
    a, b = _relation(test), _relation(chosen)
    if a is None or b is None:
        return False
    code = cst.Module([]).code_for_node
    same = code(a[0]) == code(b[0]) and code(a[2]) == code(b[2])
    swapped = code(a[0]) == code(b[2]) and code(a[2]) == code(b[0])
    relation = a[1] if same else FLIP[a[1]] if swapped else None
    return relation is not None and relation != b[1]


def _integer(node: cst.BaseExpression) -> int | None:
    try:
        value = literal_value(node)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- the key -------------------------------------------------------------------------------


def _keyed(
    unit: PyUnit,
    decision: Decision | str,
    parameters: tuple[str, str],
    local: dict[str, cst.BaseExpression],
) -> _Key | str:
    if isinstance(decision, str):
        return decision
    comparison, needs = decision
    relation = _relation(comparison)
    assert relation is not None
    left, operator, right = relation
    sides = [_written_out(side, local) for side in (left, right)]
    over = [_over(side, parameters) for side in sides]
    if sorted(over) != [0, 1] or _template(sides[0], parameters) != _template(sides[1], parameters):
        return "the two sides of its comparison are not one key of each item"
    key = sides[over.index(0)]
    problem = _impure(unit, key)
    if problem is not None:
        return problem
    kind = _kind(unit, key)
    if (needs == "number" and kind != "number") or (needs == "consistent" and kind is None):
        return "the key's type cannot be told, and the comparison is exact only for some types"
    descending = (operator == "<") != (over[0] == 0)
    return _Key(parameters[0], key, descending, kind)


class _Rename(cst.CSTTransformer):
    def __init__(self, names: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.names = names
        self.skipped: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skipped.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skipped.add(id(node.keyword))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.names.get(original_node.value)
        if value is None or id(original_node) in self.skipped:
            return updated_node
        if isinstance(value, cst.Name | cst.Attribute | cst.Subscript | cst.Call) or value.lpar:
            return value.deep_clone()
        return value.deep_clone().with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _written_out(
    node: cst.BaseExpression, local: dict[str, cst.BaseExpression]
) -> cst.BaseExpression:
    result = node.visit(_Rename(local)) if local else node
    assert isinstance(result, cst.BaseExpression)
    return result


def _reads(node: cst.CSTNode) -> set[str]:
    return {name.value for name in read_names(node)}


def _over(node: cst.BaseExpression, parameters: tuple[str, str]) -> int:
    """0 or 1 when `node` reads only that parameter; -1 otherwise."""
    reads = _reads(node)
    first, second = parameters[0] in reads, parameters[1] in reads
    return 0 if first and not second else 1 if second and not first else -1


def _template(node: cst.BaseExpression, parameters: tuple[str, str]) -> str:
    hole = cst.Name(HOLE)
    renamed = node.visit(_Rename({parameters[0]: hole, parameters[1]: hole}))
    assert isinstance(renamed, cst.BaseExpression)
    return cst.Module([]).code_for_node(renamed)


def _impure(unit: PyUnit, key: cst.BaseExpression) -> str | None:
    node = first_effect(key, REFUSED, lambda call: _pure_call(unit, call))
    if node is None:
        return None
    code = cst.Module([]).code_for_node
    if isinstance(node, cst.Call):  # REFUSED holds no call: this is one _pure_call refused
        return f"the key calls `{code(node.func)}`, which may have effects"
    return f"the key holds `{code(node)}`"


def _pure_call(unit: PyUnit, call: cst.Call) -> bool:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value in PURE_BUILTINS and not unit.binds_globally(func.value)
    return isinstance(func, cst.Attribute) and func.attr.value in STR_METHODS


def _kind(unit: PyUnit, node: cst.BaseExpression) -> str | None:
    """ "number", "text" or "sequence" when the outermost call shows it, else None."""
    if isinstance(node, cst.Tuple | cst.List) and node.elements:
        kinds = {_kind(unit, e.value) for e in node.elements}
        return "sequence" if None not in kinds else None
    if isinstance(node, cst.ListComp):
        return "sequence" if _kind(unit, node.elt) is not None else None
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute):
        # A method named like one of str's that return text is taken to be str's.
        return "text" if func.attr.value in TEXT_METHODS else None
    if not isinstance(func, cst.Name) or unit.binds_globally(func.value):
        return None
    if func.value in NUMBER_BUILTINS:
        return "number"
    if func.value == "str":
        return "text"
    if func.value in ("tuple", "list") and len(node.args) == 1:
        inner = node.args[0].value
        element = inner.elt if isinstance(inner, cst.GeneratorExp | cst.ListComp) else None
        return "sequence" if element is not None and _kind(unit, element) else None
    return None


# -- the rule ------------------------------------------------------------------------------


def _sites(unit: PyUnit) -> tuple[list[_Site], list[str]]:
    sites: list[_Site] = []
    problems: list[str] = []
    for node in unit.function_nodes(cst.Call):
        assert isinstance(node, cst.Call)
        found = _comparator_of(unit, node)
        if found is None:
            continue
        argument, comparator = found
        key = _comparator(unit, comparator)
        problem = key if isinstance(key, str) else _placement(unit, node, comparator, key)
        if problem is None and isinstance(key, _Key):
            sites.append(_Site(node, argument, key))
        else:
            problems.append(str(problem))
    return sites, problems


def _placement(
    unit: PyUnit, sort: cst.Call, comparator: cst.BaseExpression, key: _Key
) -> str | None:
    """Why the key cannot be written at the sort, or None."""
    if key.descending and key.kind == "text":
        if any(a.keyword and a.keyword.value == "reverse" for a in sort.args):
            return "a descending comparator of text in a sort that already passes reverse="
    elif key.descending and key.kind != "number":
        return "a descending comparator whose key is not a number or text"
    if isinstance(comparator, cst.Lambda):
        return None  # the key stays where the comparator was: its names mean the same
    free = _reads(key.key) - {key.parameter} - _bound_inside(key.key)
    hidden = sorted(n for n in free if not unit.visible_globally(n, sort))
    return f"{unit.function.name.value} binds {', '.join(hidden)} itself" if hidden else None


def _bound_inside(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Targets(cst.CSTVisitor):
        def visit_CompFor(self, inner: cst.CompFor) -> None:
            found.update(_reads(inner.target))

    node.visit(_Targets())
    return found


def find(unit: PyUnit) -> Finding | None:
    calls = [
        n
        for n in unit.function_nodes(cst.Call)
        if isinstance(n, cst.Call) and _comparator_of(unit, n) is not None
    ]
    if not calls:
        return None
    sites, _ = _sites(unit) if unit.whole_file else ([], [])
    return Finding(
        rule=RULE,
        cause="repeated_work",
        evidence=(
            f"`{unit.code(calls[0])}` in {unit.function.name.value} calls its comparator about "
            "n·log2(n) times, each computing both items' keys again"
        ),
        certain=bool(sites),
    )


def explain(unit: PyUnit) -> str | None:
    if find(unit) is None:
        return None  # no cmp_to_key sort: the generic "not found" says so
    if not unit.whole_file:
        return "the comparator is not shown without the whole file"
    sites, problems = _sites(unit)
    return None if sites else problems[0]


def propose(unit: PyUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not finding.certain:
        return None
    sites, _ = _sites(unit)
    mapping: dict[int, Replacement] = {}
    for site in sites:
        mapping[id(site.argument)] = site.argument.with_changes(value=_lambda(site.key))
        if site.key.descending and site.key.kind == "text":
            mapping[id(site.sort)] = _reversed
    new_function = replace_nodes(unit.function, mapping)
    hypothesis = (
        f"{unit.function.name.value} sorts through functools.cmp_to_key, calling a Python "
        "comparator that recomputes both items' keys about n·log2(n) times; a key function "
        "computes each item's key once, and the sort asks the same questions of the keys."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)


def _lambda(key: _Key) -> cst.Lambda:
    body = key.key
    if key.descending and key.kind == "number":
        inner = body.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        body = cst.UnaryOperation(operator=cst.Minus(), expression=inner)
    parameters = cst.Parameters(params=[cst.Param(cst.Name(key.parameter))])
    return cst.Lambda(params=parameters, body=body)


def _reversed(call: cst.Call) -> cst.Call:
    args = list(call.args)
    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    reverse = cst.Arg(
        value=cst.Name("True"),
        keyword=cst.Name("reverse"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    return call.with_changes(args=[*args, reverse])
