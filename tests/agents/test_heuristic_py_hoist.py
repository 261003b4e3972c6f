"""py-hoist-lookup on a small Python program: a local set's and dict's methods and math's
functions looked up on every loop iteration are looked up once before the loop, and the
program, run as a real subprocess, prints exactly what it printed before. list.append, which
CPython 3.11 specialises, and containers the rule cannot pin down are declined with a reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.heuristic import declined, python_same_output
from support.heuristic_python import proposal, subject_of

RULE = "py-hoist-lookup"

TALLY = textwrap.dedent(
    """\
    import math


    def tally(words):
        # Distinct words, a count per first letter, and a root-mean length.
        seen = set()
        firsts = {}
        total = 0.0
        for word in words:
            seen.add(word)
            firsts[word[0]] = firsts.get(word[0], 0) + 1
            total += math.sqrt(len(word))
        return sorted(seen), sorted(firsts.items()), round(total, 9)


    print(tally("the quick brown fox jumps over the lazy dog then the fox naps".split()))
    """
)


def test_methods_and_module_functions_are_looked_up_once_and_print_the_same(
    tmp_path: Path,
) -> None:
    found = proposal(TALLY, "tally", RULE)
    assert found is not None
    body = found.answer.source or ""
    assert (
        "    seen_add = seen.add\n    firsts_get = firsts.get\n    math_sqrt = math.sqrt\n"
        "    for word in words:\n"
    ) in body
    assert "        seen_add(word)\n" in body and "math_sqrt(len(word))" in body
    # The comment above the loop stays above the code it describes.
    assert body.index("# Distinct words") < body.index("seen = set()")
    python_same_output(tmp_path, TALLY, found)


SEEN = textwrap.dedent(
    """\
    def make_set():
        return set()


    def distinct(words):
        seen = set()
        for word in words:
            seen.add(word)
        return sorted(seen)


    print(distinct("a b a c".split()))
    """
)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ("seen = set()", "seen = []"),
            "CPython 3.11 specialises list.append calls, and an alias measured 25 % slower",
        ),
        (("seen = set()", "seen = make_set()"), "is not made from a set, dict or list display"),
        (
            ("        seen.add(word)\n", "        seen.add(word)\n        seen = seen | set()\n"),
            "is not bound exactly once",
        ),
    ],
    ids=["list-append", "unknown-container", "rebound-in-the-loop"],
)
def test_a_lookup_the_rule_cannot_pin_down_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = SEEN.replace(*change)
    if change[1] == "seen = []":
        text = text.replace("seen.add(word)", "seen.append(word)")
    assert text != SEEN
    assert words in declined(subject_of(text, "distinct"), RULE)
