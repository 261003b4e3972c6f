"""A mutated twin keeps the words the program itself spells, so it costs an honest program what
its original costs."""

from __future__ import annotations

import random
import re
from pathlib import Path

from speedproof.judge.inputs.mutate import mutated_twin
from speedproof.judge.inputs.program_words import program_words

# A reader of a small SQL-like language: its keywords live in a string literal, as sqlparse's do.
READER = '''"""Reads statements. SELECT and FROM in this docstring are prose, not the format."""

KEYWORDS = {"select": 1, "from": 2, "where": 3, "begin": 4, "end": 5}
LABEL = f"unused {len(KEYWORDS)}"


def is_keyword(word):
    "A one-line docstring: WORDS HERE ARE PROSE TOO."
    return word.lower() in KEYWORDS  # a comment's "quoted" words are not the format either
'''

GO_READER = """package main

// "comment" words are not the program's: GET
var methods = []string{"POST", `PATCH`}
var sep = '"'
var level = "ERROR"
"""

KEYWORD_LINE = re.compile(rb"\b(SELECT|FROM|WHERE|BEGIN|END)\b")


def _statements(count: int) -> bytes:
    rng = random.Random(4)
    lines = []
    for n in range(count):
        table = "".join(rng.choice("abcdefghij") for _ in range(6))
        column = "".join(rng.choice("klmnopqrst") for _ in range(5))
        lines += [b"BEGIN", f"SELECT {column} FROM {table}_{n}".encode(), b"WHERE id = 7", b"END"]
    return b"\n".join(lines) + b"\n"


def test_the_words_of_string_literals_count_and_docstrings_comments_and_tests_do_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "reader.py").write_text(READER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_reader.py").write_text('CASE = "orders customers"\n')
    words = program_words(tmp_path, "python")
    assert {b"select", b"from", b"where", b"begin", b"end", b"unused"} <= words
    assert not {b"prose", b"docstring", b"comment", b"quoted", b"orders", b"here"} & words


def test_go_literals_of_every_kind_count_and_comments_do_not(tmp_path: Path) -> None:
    (tmp_path / "main.go").write_text(GO_READER)
    (tmp_path / "main_test.go").write_text('package main\nvar x = "TESTONLY"\n')
    words = program_words(tmp_path, "go")
    assert {b"post", b"patch", b"error"} <= words
    assert not {b"get", b"comment", b"testonly"} & words


def test_files_the_caller_names_as_inputs_lend_no_words(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text('WORDS = "alpha"\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "generate.py").write_text('VOCABULARY = "beta gamma"\n')
    words = program_words(tmp_path, "python", lambda path: "data" in path.parts)
    assert words == {b"alpha"}


def test_a_file_python_cannot_tokenize_lends_nothing_and_stops_nothing(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text('x = """never closed\n')
    (tmp_path / "fine.py").write_text('WORDS = "kept"\n')
    assert program_words(tmp_path, "python") == {b"kept"}


def test_a_twin_keeps_the_programs_keywords_in_every_line_and_renames_the_rest() -> None:
    """Without the program's words, keywords found in under half the lines were spelt anew and
    lent to other lines: a reader of the twin met names where its keywords were."""
    content = _statements(300)
    keywords = frozenset({b"select", b"from", b"where", b"begin", b"end"})
    blind = mutated_twin(content, "lines", random.Random(9))
    aware = mutated_twin(content, "lines", random.Random(9), keywords)
    original_lines = content.splitlines()
    assert [KEYWORD_LINE.findall(x) for x in aware.splitlines()] == [
        KEYWORD_LINE.findall(x) for x in original_lines
    ]
    assert [KEYWORD_LINE.findall(x) for x in blind.splitlines()] != [
        KEYWORD_LINE.findall(x) for x in original_lines
    ]
    # The names are still new: no table or column of the original is left.
    names = {w for line in original_lines for w in re.findall(rb"[a-t]{5,6}", line)}
    assert not names & set(re.findall(rb"[a-zA-Z]{5,6}", aware))
