"""Strings built a piece at a time in a loop.

* py-repeat-concat: `for _ in range(n): s += "#"` appends the same literal n times, one
  interpreter iteration each; `s += "#" * (n)` does it in one C-level repeat. Exact for the
  builtin sequences (str, list, bytearray) and for any n `range` accepts: a negative n gives
  no iterations and an empty repeat alike. The loop variable must be used nowhere else (after
  the loop it would hold n - 1).
* py-join-parts: `s = "<literal>"` followed by a loop whose only uses of s are `s += part`
  becomes a list of parts joined once after the loop. CPython sometimes extends a string in
  place, so this is a guess the measurement must confirm; it never changes the result, because
  s is read nowhere between its literal start and the end of the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from speedproof.agents.heuristic.py_grown import appended, is_growth_of, single_assignment
from speedproof.agents.heuristic.subject import Finding, Proposal

REPEAT_RULE = "py-repeat-concat"
JOIN_RULE = "py-join-parts"
ATOMS = (cst.Name, cst.Integer, cst.Call, cst.Attribute, cst.Subscript)


# -- repeat -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Repeat:
    loop: cst.For
    step: cst.AugAssign
    count: cst.BaseExpression


def _repeats(unit: PyUnit) -> list[_Repeat]:
    found = []
    for node in unit.function_nodes(cst.For):
        assert isinstance(node, cst.For)
        repeat = _repeat(unit, node)
        if repeat is not None:
            found.append(repeat)
    return found


def _repeat(unit: PyUnit, loop: cst.For) -> _Repeat | None:
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    if not isinstance(loop.target, cst.Name) or unit.read_outside(loop.target, loop.body):
        return None
    call = loop.iter
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "range"
        and unit.is_builtin(call.func)
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    ):
        return None
    step = _single_small_statement(loop.body)
    if not (
        isinstance(step, cst.AugAssign)
        and isinstance(step.operator, cst.AddAssign)
        and isinstance(step.target, cst.Name)
        and step.target.value != loop.target.value
        and _is_text_literal(step.value)
    ):
        return None
    return _Repeat(loop=loop, step=step, count=call.args[0].value)


def _single_small_statement(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    statements: list[cst.BaseSmallStatement] = []
    if isinstance(body, cst.SimpleStatementSuite):
        statements = list(body.body)
    elif isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
        line = body.body[0]
        if isinstance(line, cst.SimpleStatementLine):
            statements = list(line.body)
    return statements[0] if len(statements) == 1 else None


def _is_text_literal(node: cst.BaseExpression) -> bool:
    try:
        value = literal_value(node)
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, str | bytes) and len(value) > 0


def find_repeat(unit: PyUnit) -> Finding | None:
    repeats = _repeats(unit)
    if not repeats:
        return None
    first = repeats[0]
    return Finding(
        rule=REPEAT_RULE,
        cause="repeated_work",
        evidence=(
            f"`{unit.code(first.step).strip()}` in {unit.function.name.value} appends the same "
            f"literal once per iteration of `range({unit.code(first.count)})`"
        ),
    )


def propose_repeat(unit: PyUnit) -> Proposal | None:
    finding = find_repeat(unit)
    if finding is None or not unit.whole_file:
        return None
    mapping: dict[int, Replacement] = {}
    for repeat in _repeats(unit):
        literal = repeat.step.value
        if not isinstance(literal, cst.SimpleString):
            literal = literal.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        count = repeat.count
        if not isinstance(count, ATOMS) or count.lpar:
            count = count.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        product = cst.BinaryOperation(left=literal, operator=cst.Multiply(), right=count)
        statement = cst.SimpleStatementLine(
            body=[repeat.step.with_changes(value=product)],
            leading_lines=repeat.loop.leading_lines,
        )
        mapping[id(repeat.loop)] = statement
    new_function = replace_nodes(unit.function, mapping)
    hypothesis = (
        f"{unit.function.name.value} appends one literal per loop iteration; repeating the "
        "literal with `*` builds the same text in one step instead of one interpreter "
        "iteration per character."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)


# -- join -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Join:
    init: cst.SimpleStatementLine
    loop: cst.For | cst.While
    name: str
    value: cst.BaseExpression
    steps: tuple[cst.AugAssign, ...]


def _joins(unit: PyUnit) -> list[_Join]:
    declared = declared_global(unit.function)
    found = []
    for node in unit.function_nodes(cst.IndentedBlock):
        assert isinstance(node, cst.IndentedBlock)
        for index, statement in enumerate(node.body):
            join = _join(node.body, index, statement, declared)
            if join is not None:
                found.append(join)
    return found


def _join(
    body: Sequence[cst.BaseStatement],
    index: int,
    statement: cst.BaseStatement,
    declared: set[str],
) -> _Join | None:
    start = _string_start(statement)
    if start is None or start[0] in declared:
        return None
    name, value = start
    for later in body[index + 1 :]:
        if name not in names_in(later):
            continue
        if not isinstance(later, cst.For | cst.While):
            return None
        steps = _appends_only(later, name)
        if steps is None:
            return None
        assert isinstance(statement, cst.SimpleStatementLine)
        return _Join(init=statement, loop=later, name=name, value=value, steps=steps)
    return None


def _string_start(statement: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """(name, literal) for a line that is exactly `name = "<str literal>"`."""
    assignment = single_assignment(statement)
    if assignment is None:
        return None
    try:
        value = literal_value(assignment[1])
    except (ValueError, SyntaxError):
        return None
    return assignment if isinstance(value, str) else None


def _appends_only(loop: cst.For | cst.While, name: str) -> tuple[cst.AugAssign, ...] | None:
    """The `name += part` statements of `loop`, when those are its only uses of `name` and
    none sits in a nested function or class."""
    steps: list[cst.AugAssign] = []
    uses = 0
    nested = False

    class _Scan(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal uses
            if node.value == name:
                uses += 1

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if is_growth_of(node, name):
                steps.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            nonlocal nested
            nested = nested or name in names_in(node)

        def visit_Lambda(self, node: cst.Lambda) -> None:
            nonlocal nested
            nested = nested or name in names_in(node)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            nonlocal nested
            nested = nested or name in names_in(node)

    loop.visit(_Scan())
    if nested or not steps or uses != len(steps):
        return None
    if any(_obviously_not_text(step.value) for step in steps):
        return None
    return tuple(steps)


def _obviously_not_text(node: cst.BaseExpression) -> bool:
    kinds = (cst.Integer, cst.Float, cst.Imaginary, cst.List, cst.Tuple, cst.Dict, cst.Set)
    if isinstance(node, kinds):
        return True
    try:
        return isinstance(literal_value(node), bytes)
    except (ValueError, SyntaxError):
        return False


def declared_global(function: cst.FunctionDef) -> set[str]:
    """The names the function (or a function nested in it) declares global or nonlocal."""
    names: set[str] = set()

    class _Declared(cst.CSTVisitor):
        def visit_Global(self, node: cst.Global) -> None:
            names.update(item.name.value for item in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            names.update(item.name.value for item in node.names)

    function.visit(_Declared())
    return names


def find_join(unit: PyUnit) -> Finding | None:
    joins = _joins(unit)
    if not joins:
        return None
    first = joins[0]
    return Finding(
        rule=JOIN_RULE,
        cause="string_building",
        evidence=(
            f"{unit.function.name.value} builds the string {first.name} with "
            f"`{unit.code(first.steps[0]).strip()}` inside a loop"
        ),
    )


def propose_join(unit: PyUnit) -> Proposal | None:
    finding = find_join(unit)
    if finding is None or not unit.whole_file:
        return None
    mapping: dict[int, Replacement] = {}
    taken: set[str] = set()
    for join in _joins(unit):
        parts = unit.fresh_name(f"{join.name}_parts", taken)
        taken.add(parts)
        start = "[]" if literal_value(join.value) == "" else f"[{unit.code(join.value)}]"
        mapping[id(join.init)] = join.init.with_changes(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(parts))], value=_list_of(start))]
        )
        for step in join.steps:
            mapping[id(step)] = appended(parts, step)
        joined = cst.parse_statement(f'{join.name} = "".join({parts})\n')
        mapping[id(join.loop)] = _followed_by(joined)
    new_function = replace_nodes(unit.function, mapping)
    hypothesis = (
        f"{unit.function.name.value} grows a string with += inside a loop, which can copy "
        "the text built so far on each step; collecting the parts in a list and joining "
        "once copies each part once."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)


def _list_of(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _followed_by(statement: cst.BaseStatement) -> Replacement:
    def build(updated: cst.BaseStatement) -> cst.FlattenSentinel[cst.BaseStatement]:
        return cst.FlattenSentinel([updated, statement])

    return build
