"""Single-change mutants of a reference: each operator, and the guarantees every mutant keeps."""

from __future__ import annotations

import ast
import json
import re

import pytest

from speedproof.corpus.mutants import OPERATORS, Mutant, mutants
from speedproof.functions.case import Case
from support.paths import ROOT

DEV = ROOT / "corpus" / "v1" / "dev.jsonl"


def _dev_sources() -> list[str]:
    lines = DEV.read_text(encoding="utf-8").splitlines()
    return [Case.model_validate(json.loads(line)).reference_source for line in lines if line]


def _sources(source: str, operator: str) -> set[str]:
    return {m.source for m in mutants(source) if m.operator == operator}


def _body(text: str) -> str:
    return ast.unparse(ast.parse(text))


def _solve(body: str) -> str:
    """A `solve(xs, m)` whose body is `body` (indented here), unparsed like a mutant."""
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return _body(f"def solve(xs, m):\n{lines}")


def test_a_less_than_becomes_less_or_equal_and_greater_than() -> None:
    got = _sources(_solve("return xs[0] < m"), "compare-swap")
    assert got == {_solve("return xs[0] <= m"), _solve("return xs[0] > m")}


@pytest.mark.parametrize(
    ("before", "after"),
    [("==", "!="), ("!=", "=="), (">=", ">"), ("in", "not in"), ("is not", "is")],
)
def test_each_comparison_is_swapped_with_its_partner(before: str, after: str) -> None:
    assert _solve(f"return m {after} xs") in _sources(
        _solve(f"return m {before} xs"), "compare-swap"
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("+", "-"),
        ("-", "+"),
        ("*", "+"),
        ("//", "%"),
        ("%", "//"),
        ("^", "|"),
        ("&", "|"),
        ("|", "&"),
        ("<<", ">>"),
        (">>", "<<"),
    ],
)
def test_an_arithmetic_operator_is_swapped_in_expressions_and_augmented_assignments(
    before: str, after: str
) -> None:
    got = _sources(_solve(f"t = m {before} 3\nt {before}= m\nreturn t"), "arith-swap")
    assert got == {
        _solve(f"t = m {after} 3\nt {before}= m\nreturn t"),
        _solve(f"t = m {before} 3\nt {after}= m\nreturn t"),
    }


def test_a_modulus_normalisation_is_removed_by_an_operand_drop_mutant() -> None:
    got = _sources(_solve("return [x % m for x in xs]"), "operand-drop")
    assert got == {_solve("return [x for x in xs]"), _solve("return [m for x in xs]")}


def test_a_width_division_is_removed_by_an_operand_drop_mutant() -> None:
    assert _solve("return xs[0]") in _sources(_solve("return xs[0] // 24"), "operand-drop")


def test_an_int_constant_moves_one_up_and_one_down_but_a_bool_stays() -> None:
    got = _sources(_solve("found = True\nreturn xs[0] if found else 0"), "constant")
    assert got == {
        _solve("found = True\nreturn xs[1] if found else 0"),
        _solve("found = True\nreturn xs[-1] if found else 0"),
        _solve("found = True\nreturn xs[0] if found else 1"),
        _solve("found = True\nreturn xs[0] if found else -1"),
    }


def test_a_constant_turned_negative_keeps_its_own_parentheses_under_a_power() -> None:
    got = _sources(_solve("return 0 ** m"), "constant")
    assert _solve("return (-1) ** m") in got
    assert all(ast.parse(text) for text in got)


def test_every_statement_of_a_body_is_dropped_once_but_not_the_docstring_or_a_pass() -> None:
    body = '"""Doc."""\nt = 0\nfor x in xs:\n    if x:\n        t += x\n    pass\nreturn t'
    dropped = _sources(_solve(body), "statement-drop")
    # `t = 0`, the loop, the `if`, `t += x` and `return t`: five, never the docstring or `pass`.
    assert len(dropped) == 5
    assert _solve(body.replace("t += x", "pass")) in dropped
    assert all(text.startswith('def solve(xs, m):\n    """Doc."""\n') for text in dropped)


def test_the_return_statement_is_dropped_too() -> None:
    assert _solve("pass") in _sources(_solve("return m"), "statement-drop")


def test_a_slice_bound_moves_by_one_each_way_and_is_removed() -> None:
    got = _sources(_solve("i = 2\nreturn xs[i + 1:]"), "slice-bound")
    assert got == {
        _solve("i = 2\nreturn xs[i + 1 + 1:]"),
        _solve("i = 2\nreturn xs[i + 1 - 1:]"),
        _solve("i = 2\nreturn xs[:]"),
    }


def test_and_becomes_or_and_a_not_is_removed() -> None:
    got = _sources(_solve("return xs and not m"), "bool-swap")
    assert got == {_solve("return xs or not m"), _solve("return xs and m")}


def test_the_test_of_an_if_a_while_and_a_conditional_expression_is_negated() -> None:
    source = _solve("while m:\n    m -= 1\nif xs:\n    return 1\nreturn 2 if m else 3")
    got = _sources(source, "condition-negate")
    assert got == {
        _solve("while not m:\n    m -= 1\nif xs:\n    return 1\nreturn 2 if m else 3"),
        _solve("while m:\n    m -= 1\nif not xs:\n    return 1\nreturn 2 if m else 3"),
        _solve("while m:\n    m -= 1\nif xs:\n    return 1\nreturn 2 if not m else 3"),
    }


def test_ids_name_the_operator_the_source_line_and_an_ordinal() -> None:
    source = "def solve(xs, m):\n    t = 0\n    return t < m\n"
    found = mutants(source)
    assert [m.id for m in found if m.operator == "compare-swap"] == [
        "compare-swap@3:0",
        "compare-swap@3:1",
    ]
    assert all(re.fullmatch(rf"{m.operator}@{m.line}:\d+", m.id) for m in found)
    assert len({m.id for m in found}) == len(found)


def test_the_same_source_gives_the_same_mutants_every_time() -> None:
    source = _dev_sources()[0]
    assert mutants(source) == mutants(source)


def test_only_the_named_function_is_mutated() -> None:
    source = "def helper(a):\n    return a + 1\n\ndef main(xs):\n    return xs[0] - 2\n"
    for mutant in mutants(source, "main"):
        assert mutant.source.startswith("def helper(a):\n    return a + 1\n")
    with pytest.raises(ValueError, match="solve"):
        mutants(source)


def test_there_are_exactly_the_eight_listed_operators() -> None:
    assert list(OPERATORS) == [
        "compare-swap",
        "arith-swap",
        "operand-drop",
        "constant",
        "statement-drop",
        "slice-bound",
        "bool-swap",
        "condition-negate",
    ]


def _one_change(original: str, mutant: Mutant) -> None:
    tree = ast.parse(mutant.source)
    assert mutant.source != original
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    want = ast.parse(original).body[0]
    assert isinstance(want, ast.FunctionDef)
    assert function.name == want.name
    assert ast.dump(function.args) == ast.dump(want.args)


def test_every_mutant_of_every_dev_reference_parses_differs_and_keeps_its_def_line() -> None:
    for source in _dev_sources():
        found = mutants(source)
        original = _body(source)
        assert len(found) >= 20
        assert len({m.source for m in found}) == len(found)
        assert {m.operator for m in found} >= {"compare-swap", "constant", "statement-drop"}
        for mutant in found:
            _one_change(original, mutant)
