"""Membership tests against a list of literals, answered by a hash lookup instead of a scan.

`x in some_list` compares x with every element until one is equal: a 358-word stop list costs
up to 358 string comparisons a call. A set answers with one hash and (usually) one comparison.

Two rules:

* py-frozenset-constant: `x in NAME` where NAME is a module-level list or tuple of str, bytes,
  int or float literals, bound once, and every use of NAME in the file is a membership test or
  `len(NAME)`. The constant becomes `frozenset({...})` (a search/replace outside the function).
  Another module that imports NAME and iterates it would see a different order; the tests and
  behaviour gates are what catch that, since one file cannot show it.
* py-set-literal: `x in [literals]` / `x in (literals)` with at least 3 elements inside the
  function becomes `x in {literals}`, which CPython compiles to a constant frozenset.

Both keep the result exactly when the probe is hashable: literals hash consistently with
equality (1 == 1.0 and hash(1) == hash(1.0)), and `in` on a set also tries identity first, like
a list. An unhashable probe (a list, a dict) would raise TypeError instead of answering False,
so a probe that is visibly a list, dict or set display declines the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment

from speedproof.agents.heuristic.py_edit import function_proposal, module_proposal
from speedproof.agents.heuristic.py_facts import (
    PyUnit,
    is_hashable_literal,
    obviously_unhashable,
    replace_nodes,
)
from speedproof.agents.heuristic.subject import Finding, Proposal

CONSTANT_RULE = "py-frozenset-constant"
LITERAL_RULE = "py-set-literal"
MIN_LITERAL_ELEMENTS = 3


@dataclass(frozen=True)
class _Test:
    comparison: cst.Comparison
    target: cst.ComparisonTarget
    probe: cst.BaseExpression


def _tests(unit: PyUnit) -> list[_Test]:
    """Every `x in C` / `x not in C` in the function whose probe is not visibly unhashable."""
    found = []
    for node in unit.function_nodes(cst.Comparison):
        assert isinstance(node, cst.Comparison)
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, cst.In | cst.NotIn) and not obviously_unhashable(left):
                found.append(_Test(node, target, left))
            left = target.comparator
    return found


# -- module-level constant ------------------------------------------------------------------


def find_constant(unit: PyUnit) -> Finding | None:
    for test in _tests(unit):
        comparator = test.target.comparator
        if not isinstance(comparator, cst.Name):
            continue
        if not unit.whole_file:
            if unit.referents(comparator) or not comparator.value.isupper():
                continue
            return Finding(
                rule=CONSTANT_RULE,
                cause="superlinear",
                evidence=(
                    f"`{unit.code(test.comparison)}` in {unit.function.name.value}: if the "
                    f"module constant {comparator.value} is a list, every call scans it"
                ),
                certain=False,
            )
        checked = _constant_list(unit, comparator)
        if checked is not None:
            _, sequence = checked
            return Finding(
                rule=CONSTANT_RULE,
                cause="superlinear",
                evidence=(
                    f"`{unit.code(test.comparison)}` in {unit.function.name.value} scans the "
                    f"{len(sequence.elements)}-element module-level "
                    f"{'list' if isinstance(sequence, cst.List) else 'tuple'} "
                    f"{comparator.value} on every call"
                ),
            )
    return None


def propose_constant(unit: PyUnit) -> Proposal | None:
    if not unit.whole_file:
        return None
    finding = find_constant(unit)
    if finding is None:
        return None
    for test in _tests(unit):
        comparator = test.target.comparator
        if not isinstance(comparator, cst.Name):
            continue
        checked = _constant_list(unit, comparator)
        if checked is None:
            continue
        _, sequence = checked
        new_module = replace_nodes(unit.module, {id(sequence): _frozenset_call(sequence)})
        hypothesis = (
            f"{unit.function.name.value} tests membership in {comparator.value}, a "
            f"{len(sequence.elements)}-element list scanned element by element on every call; "
            "as a frozenset each test is one hash lookup, with the same answers."
        )
        return module_proposal(unit, finding, new_module, hypothesis=hypothesis)
    return None


def _constant_list(unit: PyUnit, name: cst.Name) -> tuple[cst.Assign, cst.List | cst.Tuple] | None:
    resolved = unit.module_constant(name)
    if resolved is None:
        return None
    binding, assign = resolved
    sequence = assign.value
    if not isinstance(sequence, cst.List | cst.Tuple) or not sequence.elements:
        return None
    if not all(
        isinstance(element, cst.Element) and is_hashable_literal(element.value)
        for element in sequence.elements
    ):
        return None
    if not _only_membership_uses(unit, binding):
        return None
    return assign, sequence


def _only_membership_uses(unit: PyUnit, binding: Assignment) -> bool:
    """Every reference is `x in NAME`, `x not in NAME` or `len(NAME)`: nothing iterates it,
    indexes it, mutates it or passes it on, so a frozenset behaves the same everywhere."""
    for access in binding.references:
        node = access.node
        parent = unit.parent(node)
        if isinstance(parent, cst.ComparisonTarget) and isinstance(
            parent.operator, cst.In | cst.NotIn
        ):
            if parent.comparator is node:
                continue
            return False
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = unit.parent(parent)
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Name)
                and call.func.value == "len"
                and unit.is_builtin(call.func)
                and len(call.args) == 1
            ):
                continue
        return False
    return True


def _frozenset_call(sequence: cst.List | cst.Tuple) -> cst.Call:
    """`frozenset({...})` keeping the elements' layout and comments."""
    if isinstance(sequence, cst.List):
        after, before = sequence.lbracket.whitespace_after, sequence.rbracket.whitespace_before
    else:
        after = sequence.lpar[0].whitespace_after if sequence.lpar else cst.SimpleWhitespace("")
        before = sequence.rpar[-1].whitespace_before if sequence.rpar else cst.SimpleWhitespace("")
    braces = cst.Set(
        elements=sequence.elements,
        lbrace=cst.LeftCurlyBrace(whitespace_after=after),
        rbrace=cst.RightCurlyBrace(whitespace_before=before),
    )
    return cst.Call(func=cst.Name("frozenset"), args=[cst.Arg(value=braces)])


# -- literal inside the function ------------------------------------------------------------


def _literal_tests(unit: PyUnit) -> list[_Test]:
    return [
        test
        for test in _tests(unit)
        if isinstance(test.target.comparator, cst.List | cst.Tuple)
        and len(test.target.comparator.elements) >= MIN_LITERAL_ELEMENTS
        and all(
            isinstance(element, cst.Element) and is_hashable_literal(element.value)
            for element in test.target.comparator.elements
        )
    ]


def find_literal(unit: PyUnit) -> Finding | None:
    tests = _literal_tests(unit)
    if not tests:
        return None
    first = tests[0]
    assert isinstance(first.target.comparator, cst.List | cst.Tuple)
    return Finding(
        rule=LITERAL_RULE,
        cause="superlinear",
        evidence=(
            f"`{unit.code(first.comparison)}` in {unit.function.name.value} compares the probe "
            f"with up to {len(first.target.comparator.elements)} literals one by one"
        ),
    )


def propose_literal(unit: PyUnit) -> Proposal | None:
    finding = find_literal(unit)
    if finding is None or not unit.whole_file:
        return None
    mapping: dict[int, cst.CSTNode] = {}
    for test in _literal_tests(unit):
        sequence = test.target.comparator
        assert isinstance(sequence, cst.List | cst.Tuple)
        call = _frozenset_call(sequence)
        braces = call.args[0].value
        if isinstance(sequence, cst.List):
            braces = braces.with_changes(lpar=sequence.lpar, rpar=sequence.rpar)
        mapping[id(sequence)] = braces
    new_function = replace_nodes(unit.function, mapping)
    hypothesis = (
        f"{unit.function.name.value} tests membership in a literal list or tuple element by "
        "element; as a set literal CPython builds one constant frozenset and each test is a "
        "single hash lookup."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)
