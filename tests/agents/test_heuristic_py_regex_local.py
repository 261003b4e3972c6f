"""py-hoist-regex, extended to a pattern held in a local name: `pattern = "..."` bound once
before the loop that matches with it is compiled once at module level, and the program, run as
a real subprocess, prints exactly what it printed before. A name bound on only some paths, or
after its use, is declined with a reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.heuristic import declined, python_same_output
from support.heuristic_python import proposal, subject_of

RULE = "py-hoist-regex"

FIELDS = textwrap.dedent(
    """\
    import re


    def fields(lines):
        pattern = r"(\\w+)=(\\d+)"
        found = []
        for line in lines:
            for key, value in re.findall(pattern, line):
                found.append((key, int(value)))
        return found


    print(fields(["a=1 b=22", "c=x d=4", ""]))
    """
)


def test_a_pattern_bound_once_to_a_literal_is_compiled_once_and_prints_the_same(
    tmp_path: Path,
) -> None:
    found = proposal(FIELDS, "fields", RULE)
    assert found is not None
    assert found.answer.preamble == '_FIELDS_RE = re.compile(r"(\\w+)=(\\d+)")\n'
    assert "_FIELDS_RE.findall(line)" in (found.answer.source or "")
    python_same_output(tmp_path, FIELDS, found)


@pytest.mark.parametrize(
    "change",
    [
        ('    pattern = r"(\\w+)=(\\d+)"\n', '    if lines:\n        pattern = r"(\\w+)=(\\d+)"\n'),
        (
            '    pattern = r"(\\w+)=(\\d+)"\n',
            '    pattern = r"(\\w+)=(\\d+)"\n    pattern += "?"\n',
        ),
    ],
    ids=["bound-on-one-path", "bound-twice"],
)
def test_a_local_pattern_that_may_differ_or_be_unbound_is_declined_with_its_reason(
    change: tuple[str, str],
) -> None:
    text = FIELDS.replace(*change)
    assert text != FIELDS
    assert "are not a literal, a module constant" in declined(subject_of(text, "fields"), RULE)
