"""py-cmp-to-key on a small Python program: sorts through functools.cmp_to_key whose
comparators parse both items on every comparison get the key the comparator compares, and the
program, run as a real subprocess, prints exactly what it printed before (equal keys included,
so the stable order must come out the same). Each near miss is declined with its reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from support.heuristic import declined, python_same_output
from support.heuristic_python import proposal, subject_of

RULE = "py-cmp-to-key"

# Both programs sort versions by this comparator, which parses both items on every comparison.
BY_VERSION = textwrap.dedent(
    '''\
    def by_version(a, b):
        """Older versions first."""
        ka = tuple(int(p) for p in a.split("."))
        kb = tuple(int(p) for p in b.split("."))
        if ka < kb:
            return -1
        elif ka > kb:
            return 1
        return 0
    '''
)

RELEASES = (
    "import functools\nfrom functools import cmp_to_key\n\n\n"
    + BY_VERSION
    + "\n\n"
    + textwrap.dedent(
        """\
        def by_size(x, y):
            return int(y.split()[1]) - int(x.split()[1])


        def by_name(a, b):
            return (a.lower() > b.lower()) - (a.lower() < b.lower())


        def order(versions, rows, names):
            versions = sorted(versions, key=functools.cmp_to_key(by_version))
            rows.sort(key=cmp_to_key(by_size))
            names = sorted(names, key=cmp_to_key(lambda a, b: -1 if a.lower() < b.lower() else 1))
            plain = sorted(names, key=functools.cmp_to_key(by_name))
            return versions, rows, names, plain


        versions = ["1.10.0", "1.2.3", "1.2.10", "0.9", "1.2.3", "2.0", "1.2.03"] * 3
        rows = [f"r{i} {i * 7 % 5}" for i in range(30)]
        names = ["b", "A", "a", "B", "c", "C", "a"] * 4
        for part in order(versions, rows, names):
            print(part)
        """
    )
)


def test_comparators_become_keys_and_the_program_prints_the_same(tmp_path: Path) -> None:
    found = proposal(RELEASES, "order", RULE)
    assert found is not None
    body = found.answer.source or ""
    assert 'key=lambda a: tuple(int(p) for p in a.split("."))' in body
    # A descending comparator of numbers is the negated key, which asks the same questions.
    assert "key=lambda x: -(int(x.split()[1]))" in body
    assert "key=lambda a: a.lower())" in body
    assert "cmp_to_key" not in body
    python_same_output(tmp_path, RELEASES, found)


VERSIONS = (
    "import functools\n\n\n"
    + BY_VERSION
    + "\n\n"
    + textwrap.dedent(
        """\
        def lookup(v):
            return v


        def order(versions):
            return sorted(versions, key=functools.cmp_to_key(by_version))


        print(order(["1.10.0", "1.2.3", "0.9", "1.2.03"]))
        """
    )
)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ('    ka = tuple(int(p) for p in a.split("."))', "    ka = lookup(a)"),
            "the key calls `lookup`, which may have effects",
        ),
        (("    return 0\n", "    return -2\n"), "other than one branch returning a negative"),
        (
            ("    if ka < kb:\n        return -1\n", "    if ka > kb:\n        return 1\n"),
            "other than one branch returning a negative",
        ),
        (
            ("kb = tuple(int(p) for p in b.split", "kb = tuple(int(p) for p in a.split"),
            "are not one key of each item",
        ),
        (
            ("    elif ka > kb:", "    elif ka >= kb:"),
            "a branch before the negative one may hold together with it",
        ),
    ],
    ids=["unknown-call", "negative-default", "no-negative-branch", "same-item", "overlapping"],
)
def test_a_comparator_that_is_not_one_key_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = VERSIONS.replace(*change)
    if "lookup(a)" in text:
        text = text.replace('    kb = tuple(int(p) for p in b.split("."))', "    kb = lookup(b)")
    if words.startswith("a branch before"):
        # The negative branch comes second, after one that may hold together with it.
        text = text.replace(
            "    if ka < kb:\n        return -1\n    elif ka >= kb:\n        return 1\n",
            "    if ka >= kb:\n        return 1\n    elif ka < kb:\n        return -1\n",
        )
    assert change[0] in VERSIONS and text != VERSIONS
    assert words in declined(subject_of(text, "order"), RULE)


def test_a_negative_branch_after_a_disjoint_one_is_still_exact_for_typed_keys(
    tmp_path: Path,
) -> None:
    text = VERSIONS.replace(
        "    if ka < kb:\n        return -1\n    elif ka > kb:\n        return 1\n",
        "    if ka > kb:\n        return 1\n    elif ka < kb:\n        return -1\n",
    )
    assert text != VERSIONS
    found = proposal(text, "order", RULE)
    assert found is not None
    python_same_output(tmp_path, text, found)


def test_without_the_file_a_cmp_to_key_sort_is_only_suspected() -> None:
    alone = subject_of(RELEASES, "order", whole_file=False)
    (finding,) = [f for f in rules.findings(alone) if f.rule == RULE]
    assert not finding.certain and "n·log2(n)" in finding.evidence
