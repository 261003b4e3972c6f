"""The heuristic Python rules on small programs: each rewrite is written, and the rewritten
program, run as a real subprocess, prints exactly what the original printed; each near miss is
declined."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Proposal, Subject
from support.heuristic_python import proposal, rewritten, run, subject_of


def finding_rules(text: str, name: str, *, whole_file: bool = True) -> set[str]:
    return {f.rule for f in rules.findings(subject_of(text, name, whole_file=whole_file))}


def assert_same_output(tmp_path: Path, text: str, found: Proposal) -> str:
    new = rewritten(tmp_path, text, found)
    assert new != text
    before, after = run(tmp_path, text, "before"), run(tmp_path, new, "after")
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout, after.stderr) == (0, before.stdout, before.stderr)
    return new


KEYWORDS = textwrap.dedent(
    """\
    KEYWORDS = [
        "if", "else", "for", "while", "return",  # control flow
        "def", "class", "import", "from", "as", 1, 2.5, b"x",
    ]


    def is_keyword(word):
        return word in KEYWORDS


    def count(words):
        return sum(1 for w in words if w not in KEYWORDS)


    print([is_keyword(w) for w in ["if", "iff", "as", "", 1, 1.0, 2.5, b"x", "x", True]])
    print(count("if x else y for z".split()), len(KEYWORDS))
    """
)


def test_a_module_list_constant_used_only_for_membership_becomes_a_frozenset(
    tmp_path: Path,
) -> None:
    found = proposal(KEYWORDS, "is_keyword", "py-frozenset-constant")
    assert found is not None and found.answer.kind == "search_replace"
    new = assert_same_output(tmp_path, KEYWORDS, found)
    assert "KEYWORDS = frozenset({" in new and "# control flow" in new


@pytest.mark.parametrize(
    "extra",
    [
        'KEYWORDS.append("yield")\n',
        "for k in KEYWORDS:\n    print(k)\n",
        "print(KEYWORDS[0])\n",
        'KEYWORDS = KEYWORDS + ["yield"]\n',
        "def grow():\n    global KEYWORDS\n    KEYWORDS = []\n",
    ],
    ids=["mutated", "iterated", "indexed", "rebound", "rebound-in-a-function"],
)
def test_a_constant_list_used_as_a_list_anywhere_keeps_its_list(extra: str) -> None:
    assert proposal(KEYWORDS + extra, "is_keyword", "py-frozenset-constant") is None


def test_a_constant_with_a_name_among_its_elements_keeps_its_list() -> None:
    text = KEYWORDS.replace('"as", 1,', '"as", len,')
    assert proposal(text, "is_keyword", "py-frozenset-constant") is None


def test_without_the_file_the_constant_is_only_a_possible_cause() -> None:
    found = rules.findings(subject_of(KEYWORDS, "is_keyword", whole_file=False))
    assert [(f.rule, f.certain) for f in found] == [("py-frozenset-constant", False)]
    assert not list(rules.proposals(subject_of(KEYWORDS, "is_keyword", whole_file=False)))


REGEX = textwrap.dedent(
    r'''
    """Tokens."""

    import re

    WORD = r"[a-z]+'?[a-z]*"


    def tokens(line):
        pattern = re.compile(WORD, re.IGNORECASE)
        spaced = re.sub(r"\s+", " ", line, flags=re.M)
        first = re.split(r"[,;]", spaced, 1)
        hit = re.match("(?P<n>[0-9]+)", line)
        return pattern.findall(spaced), first, hit and hit.group("n"), re.findall(WORD, line)


    for line in ["Don't STOP  me, now; 42", "12 apples;pears", ""]:
        print(tokens(line))
    '''
)


def test_regexes_compiled_per_call_are_hoisted_with_their_flags(tmp_path: Path) -> None:
    found = proposal(REGEX, "tokens", "py-hoist-regex")
    assert found is not None and found.answer.kind == "function"
    preamble = found.answer.preamble or ""
    assert "re.compile(WORD, re.IGNORECASE)" in preamble
    assert 're.compile(r"\\s+", re.M)' in preamble
    assert preamble.count("re.compile(WORD") == 2  # with and without the flag: two patterns
    new = assert_same_output(tmp_path, REGEX, found)
    assert "re.sub(" not in new and "re.split(" not in new


@pytest.mark.parametrize(
    "change",
    [
        ("re.compile(WORD, re.IGNORECASE)", "re.compile(line)"),
        ("re.compile(WORD, re.IGNORECASE)", "re.compile(WORD + line)"),
        ("re.compile(WORD, re.IGNORECASE)", "re.compile(WORD, flags)"),
        ("re.compile(WORD, re.IGNORECASE)", 're.compile("(unclosed")'),
    ],
    ids=["parameter", "built-from-a-variable", "variable-flags", "does-not-compile"],
)
def test_a_pattern_that_is_not_a_constant_is_left_alone(change: tuple[str, str]) -> None:
    text = REGEX.replace(*change).replace("def tokens(line):", "def tokens(line, flags=0):")
    text = text.replace('re.sub(r"\\s+", " ", line, flags=re.M)', "line")
    text = text.replace('re.split(r"[,;]", spaced, 1)', "1")
    text = text.replace('re.match("(?P<n>[0-9]+)", line)', "None")
    text = text.replace(", re.findall(WORD, line)", "")
    assert proposal(text, "tokens", "py-hoist-regex") is None


def test_a_pattern_constant_defined_below_the_function_is_left_alone() -> None:
    text = textwrap.dedent(
        """\
        import re


        def first(line):
            return re.search(LATER, line)


        LATER = "x+"
        """
    )
    assert proposal(text, "first", "py-hoist-regex") is None


def test_a_regex_module_imported_inside_the_function_is_not_hoisted() -> None:
    text = "def first(line):\n    import re\n\n    return re.search('x+', line)\n"
    assert finding_rules(text, "first") == set()


def test_a_regex_in_a_decorated_method_is_hoisted_above_the_class(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        import re


        # Splits records.
        class Splitter:
            @staticmethod
            def parts(line):
                return re.split(";+", line)


        print([Splitter.parts(x) for x in ["a;b;;c", ""]])
        """
    )
    found = proposal(text, "Splitter.parts", "py-hoist-regex")
    assert found is not None and found.answer.kind == "function"
    assert (found.answer.source or "").startswith("    @staticmethod\n    def parts(line):")
    new = assert_same_output(tmp_path, text, found)
    assert new.index("_PARTS_RE = re.compile") < new.index("# Splits records.")


LITERAL = textwrap.dedent(
    """\
    def kinds(names):
        out = []
        for name in names:
            suffix = name.rsplit(".", 1)[-1]
            out.append(suffix in ["py", "pyi", "pyx", 3] or suffix not in ("c", "h", "cc"))
        return out


    print(kinds(["a.py", "b.c", "c.pyx", "d.txt", "e.h", "3"]))
    """
)


def test_membership_in_a_literal_list_becomes_a_set_literal(tmp_path: Path) -> None:
    found = proposal(LITERAL, "kinds", "py-set-literal")
    assert found is not None
    new = assert_same_output(tmp_path, LITERAL, found)
    assert '{"py", "pyi", "pyx", 3}' in new and '{"c", "h", "cc"}' in new


def test_an_unhashable_probe_or_a_short_literal_keeps_its_list() -> None:
    unhashable = LITERAL.replace("suffix in [", "[suffix] in [")
    unhashable = unhashable.replace('suffix not in ("c", "h", "cc")', "False")
    assert proposal(unhashable, "kinds", "py-set-literal") is None
    short = LITERAL.replace('["py", "pyi", "pyx", 3]', '["py", "pyi"]')
    short = short.replace('("c", "h", "cc")', "(name, 1, 2)")
    assert proposal(short, "kinds", "py-set-literal") is None


BARS = textwrap.dedent(
    """\
    def bars(counts, width):
        lines = []
        for count in counts:
            bar = ""
            for _ in range(count * width // max(counts)):
                bar += "#"
            lines.append(f"{count:>3} {bar}")
        return lines


    print("\\n".join(bars([3, 0, 7, 1], 10)))
    """
)


def test_a_literal_appended_once_per_iteration_becomes_one_repeat(tmp_path: Path) -> None:
    found = proposal(BARS, "bars", "py-repeat-concat")
    assert found is not None
    new = assert_same_output(tmp_path, BARS, found)
    assert 'bar += "#" * (count * width // max(counts))' in new


def test_a_loop_variable_read_after_the_loop_keeps_the_loop() -> None:
    text = BARS.replace(
        'lines.append(f"{count:>3} {bar}")', 'lines.append(f"{count:>3} {bar} {_}")'
    )
    assert proposal(text, "bars", "py-repeat-concat") is None


EXTREMES = textwrap.dedent(
    """\
    WORDS = ["pear", "fig", "plum", "kiwi", "date", "lime", "apple", "melon"]


    def extremes(words):
        return (
            sorted(words, key=len)[0],
            sorted(words, key=len)[-1],
            sorted(words, key=len, reverse=True)[0],
            sorted(words, key=len, reverse=True)[-1],
            sorted(w for w in words if "e" in w)[-1],
            sorted([1, 1.0, True])[-1],
        )


    print(extremes(WORDS))
    """
)


def test_sorting_for_the_first_or_last_item_becomes_min_or_max_with_the_same_ties(
    tmp_path: Path,
) -> None:
    found = proposal(EXTREMES, "extremes", "py-min-max-not-sorted")
    assert found is not None
    new = assert_same_output(tmp_path, EXTREMES, found)
    assert "sorted(" not in new
    assert "max(reversed(list(words)), key=len)" in new


def test_sorting_inside_a_try_that_catches_index_error_is_left_alone() -> None:
    text = textwrap.dedent(
        """\
        def smallest(values):
            try:
                return sorted(values)[0]
            except IndexError:
                return None
        """
    )
    assert proposal(text, "smallest", "py-min-max-not-sorted") is None
    shadowed = "def max(*a, **k):\n    return 0\n\n\n" + text.replace("try:", "if True:").replace(
        "    except IndexError:\n        return None\n", ""
    )
    assert proposal(shadowed, "smallest", "py-min-max-not-sorted") is None


PRINTS = textwrap.dedent(
    """\
    def report(rows):
        print("header")
        for name, value in rows:
            print(name, value, sep=" % ", end=";\\n")
        for row in rows:
            label = row[0].upper()
            print(label)
            print()
            print(label, row, 100, "%d")


    report([("a", 1), ("b", None), ("c", 2.5)])
    print("done")
    """
)


def test_prints_in_loops_become_writes_of_the_same_text(tmp_path: Path) -> None:
    found = proposal(PRINTS, "report", "py-print-writes")
    assert found is not None and found.answer.imports == ["import sys"]
    new = assert_same_output(tmp_path, PRINTS, found)
    assert "sys.stdout.writelines(" in new and "sys.stdout.write(" in new
    assert 'print("header")' in new  # outside any loop: left as it is


@pytest.mark.parametrize(
    "variant",
    [
        "print(label, file=sys.stderr)",
        "print(label, flush=True)",
        "print(label, end=END)",
        "print(*row)",
        "value = print(label)",
    ],
)
def test_a_print_whose_arguments_matter_is_left_alone(variant: str) -> None:
    text = textwrap.dedent(
        f"""\
        import sys


        def report(rows):
            for row in rows:
                label = row[0]
                {variant}
        """
    )
    assert proposal(text, "report", "py-print-writes") is None


JOIN = textwrap.dedent(
    """\
    def csv_line(values):
        text = "["
        for value in values:
            if value is None:
                continue
            text += str(value)
            text += ","
        return text + "]"


    print(csv_line([1, None, "x", 2.5]), csv_line([]))
    """
)


def test_a_string_grown_in_a_loop_becomes_a_joined_list(tmp_path: Path) -> None:
    found = proposal(JOIN, "csv_line", "py-join-parts")
    assert found is not None
    new = assert_same_output(tmp_path, JOIN, found)
    assert 'text_parts = ["["]' in new and 'text = "".join(text_parts)' in new


def test_a_string_read_inside_its_loop_keeps_its_concatenation() -> None:
    text = JOIN.replace("if value is None:", "if value is None or len(text) > 9:")
    assert proposal(text, "csv_line", "py-join-parts") is None


def test_a_function_that_does_not_parse_has_no_finding() -> None:
    broken = Subject("prog.f", "prog.py", "python", "def f(:\n", 1, 1, "def f(:\n")
    assert rules.findings(broken) == []
    assert list(rules.proposals(broken)) == []
