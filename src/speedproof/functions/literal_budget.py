"""The literal budget of a candidate: how much data its source may carry.

A table of answers computed before the run (outside any count) is work the measurement never
sees: a 4,001-entry tuple of precomputed answers earned +4.36 on function-only counts while its
whole process was 1.5x slower than the reference's. The calibration now charges compiling such a
table (`instruction_cost.py`), but a table still pays wherever the calls it replaces cost more
than parsing it, so its size is bounded too: the literals of one function (every str, int and
float constant but its docstring, counted in characters of their text) may total at most
MAX_LITERAL_CHARS. Every reference and known-fast source of corpora v1 and v2 (750 sources) holds
at most 18 such characters; 256 leaves 14 times that.
"""

from __future__ import annotations

import ast

MAX_LITERAL_CHARS = 256


def literal_chars(function: ast.FunctionDef) -> int:
    """Characters of literal data in `function`: str lengths, digits of ints and floats."""
    docstring = _docstring(function)
    total = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Constant) and node is not docstring:
            total += _size(node.value)
    return total


def _docstring(function: ast.FunctionDef) -> ast.Constant | None:
    first = function.body[0] if function.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.value if isinstance(first.value.value, str) else None
    return None


def _size(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int):
        # str() of an int past 4,300 digits (about 14,000 bits) raises: estimate those.
        bits = abs(value).bit_length()
        return len(str(abs(value))) if bits <= 13_000 else bits * 30_103 // 100_000 + 1
    return len(repr(value))


def over_budget(function: ast.FunctionDef) -> str | None:
    """Why `function` carries too much literal data, or None when it is within the budget."""
    chars = literal_chars(function)
    if chars <= MAX_LITERAL_CHARS:
        return None
    return (
        f"literals total {chars} characters, more than {MAX_LITERAL_CHARS}: "
        "compute a table in the function instead of writing it out"
    )
