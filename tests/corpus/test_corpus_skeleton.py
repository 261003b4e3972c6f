from __future__ import annotations

from speedproof.corpus.skeleton import loop_skeleton

SCAN = """
def solve(xs, queries):
    m = 13
    out = []
    for q in queries:
        hit = False
        for x in xs:
            if x % m == q:
                hit = True
                break
        out.append(hit)
    return out
"""
RENAMED = """
def answer(values, asks):
    width = 977
    result = []
    for a in asks:
        seen = False
        for v in values:
            if v // width + 3 == a * 2:
                seen = True
                break
        result.append(seen)
    return result
"""
WHILE_SCAN = """
def solve(xs, queries):
    out = []
    i = 0
    while i < len(queries):
        j = 0
        found = False
        while j < len(xs) and not found:
            if xs[j] == queries[i]:
                found = True
            j += 1
        out.append(found)
        i += 1
    return out
"""
COMPREHENSION = """
def solve(xs, queries):
    return [q for q in queries if any(x == q for x in xs)]
"""


def test_names_literals_and_arithmetic_are_erased_from_the_skeleton() -> None:
    assert loop_skeleton(SCAN) == loop_skeleton(RENAMED)


def test_a_while_loop_and_a_for_loop_have_different_skeletons() -> None:
    assert loop_skeleton(SCAN) != loop_skeleton(WHILE_SCAN)


def test_a_comprehension_differs_from_the_explicit_loop_it_replaces() -> None:
    assert loop_skeleton(COMPREHENSION) != loop_skeleton(SCAN)
    assert "G{" in loop_skeleton(COMPREHENSION)


def test_the_skeleton_shows_loop_nesting_breaks_and_call_shapes() -> None:
    assert loop_skeleton(SCAN) == "def[F()[F()[I()[B]]E(m1)]R()]"


def test_a_conditional_expression_is_arithmetic_not_control_flow() -> None:
    plain = "def solve(xs):\n    return [x % 7 for x in xs]\n"
    absolute = "def solve(xs):\n    return [(x if x >= 0 else -x) % 7 for x in xs]\n"
    assert loop_skeleton(plain) == loop_skeleton(absolute)
