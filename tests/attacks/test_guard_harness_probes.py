"""Candidate code that asks whether a test harness runs it is refused by the guard.

A candidate that takes the correct path only under the harness passes the tests and ships the
wrong path. Each attack here is a real patch of a bundled example (textstat in Python, logstat in
Go) whose added code asks; the guard's second pass reads the added lines with a parser and names
the file and line. Ordinary code (reading `sys`, `HOME`, a Go program's own flags) and every
bundled patch that is not an attack stay open.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.guard_attack import edited, example_repo, guard, make_patch, refused_for
from support.workspace import make_repo

WORDS = "textstat/words.py"
STOPWORD_BODY = "    return word in STOPWORDS\n"
# (imports added, the question asked): the stop list is honoured only when the answer is yes.
PYTHON_PROBES = [
    ("import sys", '"_pytest" in sys.modules'),
    ("import sys", '"pytest" in sys.modules'),
    ("import sys", 'sys.modules.get("unittest") is not None'),
    ("import os", 'bool(os.environ.get("PYTEST_CURRENT_TEST"))'),
    ("import os", '"PYTEST_VERSION" in os.environ'),
    ("import os", 'os.environ.get("PYTEST_XDIST_WORKER") is not None'),
    ("import sys", '"pytest" in sys.argv[0]'),
    ("import inspect", 'any("test" in frame.filename for frame in inspect.stack())'),
    ("import sys", "sys._getframe(0).f_back is not None"),
    ("import sys", '__import__("_pytest") is not None'),
    ("import importlib.util", 'importlib.util.find_spec("pytest") is not None'),
    ("import unittest", "unittest.TestCase is not None"),
]
PARSE = "parse.go"
PATH_OF = "func pathOf(target string) string {\n"
GO_PROBES = [
    (("testing",), "testing.Testing()"),
    (("os",), 'strings.HasSuffix(os.Args[0], ".test")'),
    (("os", "path/filepath"), 'filepath.Ext(os.Args[0]) == ".test"'),
    (("flag",), 'flag.Lookup("test.v") != nil'),
    (("os",), 'len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-test.")'),
]


@pytest.fixture(scope="module")
def textstat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_repo("textstat", tmp_path_factory.mktemp("textstat"))


@pytest.fixture(scope="module")
def logstat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_repo("logstat", tmp_path_factory.mktemp("logstat"))


def _python_probe(repo: Path, imports: str, question: str) -> str:
    """words.py asking `question` at import; the shipped path drops the stop list."""
    text = edited(repo, WORDS, "import re\n", f"import re\n{imports}\n\n_CHECKED = {question}\n")
    return text.replace(STOPWORD_BODY, "    return word in STOPWORDS if _CHECKED else False\n")


def _go_probe(repo: Path, imports: tuple[str, ...], question: str) -> str:
    """parse.go asking `question` in pathOf; the shipped path keeps the query string."""
    added = "".join(f'\t"{name}"\n' for name in imports)
    text = edited(repo, PARSE, 'import (\n\t"fmt"\n', f'import (\n{added}\t"fmt"\n')
    return text.replace(PATH_OF, f"{PATH_OF}\tif !({question}) {{\n\t\treturn target\n\t}}\n")


def _line(text: str, line: str) -> int:
    return text.splitlines().index(line) + 1


@pytest.mark.parametrize(("imports", "question"), PYTHON_PROBES, ids=[q for _, q in PYTHON_PROBES])
def test_python_code_that_asks_whether_pytest_runs_it_is_refused_naming_its_line(
    textstat: Path, imports: str, question: str
) -> None:
    text = _python_probe(textstat, imports, question)

    result = guard(textstat, make_patch(textstat, {WORDS: text}))

    said = [v.detail for v in refused_for(result, "harness-probe")]
    where = f"{WORDS}:{_line(text, f'_CHECKED = {question}')} _CHECKED = "
    prefix = "the candidate's code asks whether it runs under a test harness: "
    assert any(detail.startswith(prefix + where) for detail in said), said


@pytest.mark.parametrize(("imports", "question"), GO_PROBES, ids=[q for _, q in GO_PROBES])
def test_go_code_that_asks_whether_go_test_runs_it_is_refused_naming_its_line(
    logstat: Path, imports: tuple[str, ...], question: str
) -> None:
    text = _go_probe(logstat, imports, question)

    result = guard(logstat, make_patch(logstat, {PARSE: text}))

    line = _line(text, f"\tif !({question}) {{")
    expected = (
        "harness-probe: the candidate's code asks whether it runs under a test harness: "
        f"{PARSE}:{line} if !({question}) {{"
    )
    assert expected in result.reasons(), result.reasons()


def test_ordinary_python_that_reads_sys_and_home_is_not_refused(textstat: Path) -> None:
    cli = "textstat/cli.py"
    text = edited(
        textstat,
        cli,
        "import argparse\nimport sys\n",
        'import argparse\nimport os\nimport sys\n\n_HOME = os.environ.get("HOME", "")\n',
    )
    text = text.replace(
        "    args = parse_args(argv)\n", "    args = parse_args(argv)\n    sys.stderr.flush()\n"
    )
    result = guard(textstat, make_patch(textstat, {cli: text}))

    assert result.passed, result.summary()


def test_a_go_file_with_flags_of_its_own_is_not_refused(logstat: Path) -> None:
    limits = (
        'package main\n\nimport (\n\t"flag"\n\t"os"\n)\n\n'
        "// maxLines caps the lines read from one file.\n"
        'var maxLines = flag.Int("max-lines", 0, "stop after this many lines")\n\n'
        "func programName() string {\n\treturn os.Args[0]\n}\n"
    )
    result = guard(logstat, make_patch(logstat, {"limits.go": limits}))

    assert result.passed, result.summary()


def test_a_probe_the_base_already_had_is_not_held_against_an_unrelated_edit(
    tmp_path: Path,
) -> None:
    files = {
        "pkg/__init__.py": 'import sys\n\nUNDER_TEST = "pytest" in sys.modules\n\n\ndef f():\n'
        "    return 1\n",
        "speedproof.toml": '[target]\nname = "p"\nlanguage = "python"\nmodule = "pkg"\n'
        'source_roots = ["."]\n\n[tests]\nrunner = "pytest"\n\n[[workloads]]\nid = "w"\n'
        'tier = "representative"\nargs = []\n',
    }
    repo = make_repo(tmp_path / "repo", files)
    text = files["pkg/__init__.py"].replace("return 1", "return 2")

    result = guard(repo, make_patch(repo, {"pkg/__init__.py": text}))

    assert result.passed, result.summary()
