"""py-inline-helper on the shape of Python-Markdown's `isString`: a helper whose body is `if C:
return A` then `return B` (or `else: return B`) is written in place as `(A if C else B)` in the
hot loop that calls it, and the program, run as a real subprocess, prints exactly what it
printed before. A branch with more than a return is still declined."""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.heuristic import declined, python_same_output
from support.heuristic_python import proposal, subject_of

RULE = "py-inline-helper"

PROGRAM = textwrap.dedent(
    '''\
    class AtomicString(str):
        """A string the inline patterns leave alone."""


    def is_string(s):
        """Return `True` if object is a string but not an AtomicString."""
        if not isinstance(s, AtomicString):
            return isinstance(s, str)
        return False


    def is_short(s):
        if len(s) < 4:
            return "short"
        else:
            return "long"


    def describe(items):
        out = []
        for item in items:
            if is_string(item):
                out.append(is_short(item))
            else:
                out.append("-")
        return out


    print(describe(["ab", AtomicString("atomic"), 3, "longer", None, AtomicString("x")]))
    '''
)


def test_an_if_return_helper_is_written_in_place_as_a_conditional_and_prints_the_same(
    tmp_path: Path,
) -> None:
    found = proposal(PROGRAM, "describe", RULE)
    assert found is not None
    new = python_same_output(tmp_path, PROGRAM, found)
    assert "if (isinstance(item, str) if not isinstance(item, AtomicString) else False):" in new
    assert 'out.append(("short" if len(item) < 4 else "long"))' in new


def test_a_branch_doing_more_than_returning_is_declined_with_its_reason() -> None:
    text = PROGRAM.replace(
        "    if len(s) < 4:\n        return",
        "    if len(s) < 4:\n        print(s)\n        return",
    ).replace("if is_string(item):", "if isinstance(item, str):")
    assert "print(s)" in text
    reason = declined(subject_of(text, "describe"), RULE)
    assert "is_short is not one return statement, nor `if C: return A` then `return B`" in reason
