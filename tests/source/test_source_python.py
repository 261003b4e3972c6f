"""The Python reader on real Python files: textstat as shipped, and a small file with decorators,
nested functions and classes, an async function and a broken file."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from speedproof.source.function import SourceFunction, lines_of
from speedproof.source.python import (
    class_of_method,
    first_function,
    function_alone,
    functions,
    locate,
    module_name,
    module_of,
    resolved,
)
from support.paths import EXAMPLES

TRICKY = """import functools


def plain(x):
    def inner(y):
        return y + 1
    return inner(x)


class Outer:
    class Inner:
        @staticmethod
        @functools.cache
        def deep(n):
            return [i * i for i in range(n)]

    def __init__(self):
        self.out = open("log.txt", "w")

    async def fetch(self):
        return 1
"""


def test_textstat_functions_are_named_by_module_with_their_exact_lines() -> None:
    root = EXAMPLES / "textstat"
    path = root / "textstat" / "analysis.py"
    module = module_name(path, [root])
    assert module == "textstat.analysis"
    found = {f.name: f for f in functions(path, "textstat/analysis.py", module)}
    total = found["textstat.analysis.TextStats.total_words"]
    # The decorator's line starts the span: a replacement of the method carries it.
    assert (total.start_line, total.end_line) == (43, 45)
    assert total.source.startswith("    @property\n    def total_words(self)")
    assert total.source == lines_of(path.read_text(), 43, 45)
    assert "textstat.analysis.top_words" in found
    assert total.language == "python"


def test_decorators_nested_classes_and_async_methods_are_read(tmp_path: Path) -> None:
    path = tmp_path / "pkg" / "tricky.py"
    path.parent.mkdir()
    path.write_text(TRICKY)
    found = functions(path, "pkg/tricky.py", module_name(path, [tmp_path]) or "")
    names = [f.name for f in found]
    assert names == [
        "pkg.tricky.plain",
        "pkg.tricky.Outer.Inner.deep",
        "pkg.tricky.Outer.__init__",
        "pkg.tricky.Outer.fetch",
    ]
    plain, deep = found[0], found[1]
    # A nested function belongs to the function that holds it.
    assert (plain.start_line, plain.end_line) == (4, 7)
    assert "def inner" in plain.source
    assert (deep.start_line, deep.end_line) == (12, 15)
    assert deep.source.lstrip().startswith("@staticmethod\n")


def test_a_broken_file_has_no_functions(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    assert functions(path, "broken.py", "broken") == []
    assert module_of("def f(:\n") is None
    assert resolved("def f(:\n") is None


def test_files_outside_the_source_roots_or_in_site_packages_are_not_the_target_s(
    tmp_path: Path,
) -> None:
    own = tmp_path / "src"
    assert module_name(own / "pkg" / "__init__.py", [own]) == "pkg"
    assert module_name(own / "venv" / "site-packages" / "x.py", [own]) is None
    assert module_name(tmp_path / "elsewhere.py", [own]) is None


def test_a_function_is_found_by_its_qualified_name_and_by_span_when_names_repeat() -> None:
    text = TRICKY + "\n\ndef deep(n):\n    return n\n"
    parsed = resolved(text)
    assert parsed is not None
    nested = SourceFunction("pkg.tricky.Outer.Inner.deep", "t.py", "python", "", 12, 15)
    top = SourceFunction("pkg.tricky.deep", "t.py", "python", "", 24, 25)
    found = locate(parsed.module, nested, parsed.positions)
    assert isinstance(found, cst.FunctionDef) and found.decorators
    again = locate(parsed.module, top, parsed.positions)
    assert again is not None and again is not found and not again.decorators
    # A module-level `deep` also ends the nested one's name: without positions neither is
    # guessed; the module-level one's own name matches it alone.
    assert locate(parsed.module, nested, None) is None
    assert locate(parsed.module, top, None) is again


def test_a_method_shown_alone_parses_dedented_and_its_class_is_found_in_the_file() -> None:
    alone = function_alone("    def fetch(self):\n        return 1\n")
    assert alone is not None
    function = first_function(alone)
    assert function is not None and function.name.value == "fetch"
    module = module_of(TRICKY)
    assert module is not None
    klass = class_of_method(module, "__init__")
    assert klass is not None and klass.name.value == "Outer"
    assert class_of_method(module, "missing") is None
