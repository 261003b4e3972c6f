"""The words a program spells in its own string literals: the format words of its inputs.

A mutated twin has to cost an honest program what its original costs, or a real win on the
original reads as "does not carry over" on the twin. Whether a word of the input belongs to its
format cannot be told from the input alone: SQL keywords sit in a few lines each, so a rule that
keeps only the words found in half the records (`mutate/rename.py`) spelt `SELECT`, `FROM` and
`END` anew, and lent them to other lines; sqlparse then read a procedure's keywords as names,
its baseline did 42 % less work on the twin, and a real 51 % win read +4.7 % there.

The program knows its format: a parser names its keywords, levels and labels in string literals
(sqlparse's keyword table, a log reader's `"GET"` and `"ERROR"`). So every word of two or more
ASCII letters in a string literal of the baseline's non-test source keeps its spelling in a twin
(compared without case, as such readers mostly compare). Docstrings and comments are prose, not
format, and are left out; so are test files and the protected inputs and their generators, whose
literals are inputs, not the reader's words. The source is the baseline's, which no candidate
wrote.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

_WORD = re.compile(r"[A-Za-z]{2,}")
# Go's comments and literals in one pass, so that a quote inside a comment starts nothing.
_GO_LEXEMES = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|`[^`]*`|\'(?:[^\'\\\n]|\\.)*\'', re.DOTALL
)
_SKIPPED_FOLDERS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", "testdata"})
# Beyond these the words are plenty and reading more only costs time: sqlparse's source is 0.3 MB
# in 40 files, logstat's 20 KB.
MAX_FILES = 2000
MAX_BYTES = 16 * 1024 * 1024
_NOT_CODE = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT})
# Python 3.12 splits an f-string into parts; its text is the middle part (-1: no such token).
_STRING_TYPES = frozenset({tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)})


def program_words(
    root: Path, language: str, skip: Callable[[Path], bool] = lambda _path: False
) -> frozenset[bytes]:
    """Lower-case words of the string literals in the non-test source under `root`, leaving out
    the files `skip` names (inputs and their generators: their words are the input's)."""
    suffix = ".go" if language == "go" else ".py"
    reader = _go_literals if language == "go" else _python_literals
    words: set[bytes] = set()
    budget = MAX_BYTES
    files = (path for path in _source_files(root, suffix) if not skip(path))
    for count, path in enumerate(files):
        if count >= MAX_FILES or budget <= 0:
            break
        text = path.read_text(encoding="utf-8", errors="replace")
        budget -= len(text)
        for literal in reader(text):
            words.update(w.lower().encode() for w in _WORD.findall(literal))
    return frozenset(words)


def _source_files(root: Path, suffix: str) -> Iterator[Path]:
    for path in sorted(root.rglob(f"*{suffix}")):
        parts = path.relative_to(root).parts
        if _SKIPPED_FOLDERS.intersection(parts) or _is_test(parts) or not path.is_file():
            continue
        yield path


def _is_test(parts: tuple[str, ...]) -> bool:
    name = parts[-1]
    folders = parts[:-1]
    return (
        any(p in ("test", "tests") for p in folders)
        or name.startswith("test_")
        or name.endswith(("_test.py", "_test.go"))
        or name == "conftest.py"
    )


def _go_literals(text: str) -> Iterator[str]:
    for match in _GO_LEXEMES.finditer(text):
        lexeme = match.group()
        if not lexeme.startswith("/"):
            yield lexeme


def _python_literals(text: str) -> Iterator[str]:
    """String literals outside docstrings: a logical line made of strings alone is prose."""
    line: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _NOT_CODE or token.type == tokenize.DEDENT:
                if token.type == tokenize.NEWLINE:
                    yield from _strings_of(line)
                    line = []
                continue
            line.append(token)
    except (tokenize.TokenError, SyntaxError):
        # A file Python cannot read lends no words; the rest of the tree still does.
        return
    yield from _strings_of(line)


def _strings_of(line: list[tokenize.TokenInfo]) -> Iterator[str]:
    strings = [t.string for t in line if t.type in _STRING_TYPES]
    if len(strings) == len(line):
        return
    yield from strings
