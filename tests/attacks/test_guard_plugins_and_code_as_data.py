"""Harness plugins added as packaging metadata, and code smuggled in as data, are refused.

Each attack is a real patch of a bundled example. A `*.dist-info` folder at the repository root
(which is on sys.path when the tests run) registers a pytest plugin through its entry points; a
Go target has no Python rules, yet a Python runner may still run over its tree. A meta-path
finder runs a marshal blob of pre-compiled byte-code in place of a module's source: a start-up
win no installed copy has, and code no reviewer can read. Every bundled patch that is not an
attack passes both guard passes.
"""

from __future__ import annotations

import base64
import marshal
import textwrap
from pathlib import Path

import pytest

from speedproof.examples import get_example
from support.guard_attack import edited, example_repo, guard, make_patch, refused_for

INIT = "textstat/__init__.py"
PLUGIN = textwrap.dedent(
    """
    def pytest_runtest_logreport(report):
        # Every failure reported as a pass.
        if report.failed:
            report.outcome = "passed"
    """
)
ENTRY_POINTS = "[pytest11]\nspeedups = textstat_speedups\n"
METADATA = "Metadata-Version: 2.1\nName: textstat-speedups\nVersion: 1.0\n"


@pytest.fixture(scope="module")
def textstat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_repo("textstat", tmp_path_factory.mktemp("textstat"))


@pytest.fixture(scope="module")
def logstat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_repo("logstat", tmp_path_factory.mktemp("logstat"))


def _metadata(folder: str) -> dict[str, str]:
    return {
        f"{folder}/entry_points.txt": ENTRY_POINTS,
        f"{folder}/METADATA": METADATA,
        "textstat_speedups.py": PLUGIN,
    }


HOOK_FILES = {
    "dist-info": _metadata("textstat_speedups-1.0.dist-info"),
    "egg-info": _metadata("textstat_speedups.egg-info"),
    "pth": {"speedups.pth": "import textstat_speedups\n", "textstat_speedups.py": PLUGIN},
    "sitecustomize": {"sitecustomize.py": PLUGIN},
    "usercustomize": {"usercustomize.py": PLUGIN},
    "conftest": {"conftest.py": PLUGIN},
}


@pytest.mark.parametrize("kind", ["dist-info", "egg-info"])
def test_packaging_metadata_that_registers_a_pytest_plugin_is_refused(
    textstat: Path, kind: str
) -> None:
    result = guard(textstat, make_patch(textstat, HOOK_FILES[kind]))

    paths = {v.path for v in refused_for(result, "protected-path")}
    assert any(path and f".{kind}/entry_points.txt" in path for path in paths), paths
    assert "whose entry points load plugins" in result.summary()


@pytest.mark.parametrize("kind", sorted(HOOK_FILES))
def test_a_go_target_refuses_python_start_up_hooks_and_plugin_metadata_too(
    logstat: Path, kind: str
) -> None:
    result = guard(logstat, make_patch(logstat, HOOK_FILES[kind]))

    assert not result.passed
    assert "protected-path" in result.rules, result.summary()


def test_a_pytest_plugins_declaration_in_the_package_is_refused(textstat: Path) -> None:
    text = edited(
        textstat,
        INIT,
        '__version__ = "0.4.1"\n',
        '__version__ = "0.4.1"\n\npytest_plugins = ["textstat.speedups"]\n',
    )
    files = {INIT: text, "textstat/speedups.py": PLUGIN}

    result = guard(textstat, make_patch(textstat, files))

    said = {v.detail for v in refused_for(result, "harness-plugin")}
    assert (
        f"the candidate's code declares a test-harness plugin: {INIT}:5 pytest_plugins = "
        '["textstat.speedups"]' in said
    ), said
    assert any(
        d.startswith(
            "the candidate's code declares a test-harness plugin: "
            "textstat/speedups.py:2 def pytest_runtest_logreport"
        )
        for d in said
    )


def _blob() -> str:
    """textstat's words module, compiled and marshalled: what the finder runs instead."""
    words = get_example("textstat").folder / "textstat" / "words.py"
    code = compile(words.read_text(encoding="utf-8"), str(words), "exec")
    return base64.b64encode(marshal.dumps(code)).decode("ascii")


FINDER = '''\
"""Pre-compiled modules: no parsing at start-up."""

import base64
import importlib.abc
import importlib.util
import marshal
import sys

_BLOB = "{blob}"


class _Precompiled(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name != "textstat.words":
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(marshal.loads(base64.b64decode(_BLOB)), module.__dict__)


sys.meta_path.insert(0, _Precompiled())
'''


def test_a_meta_path_finder_running_a_marshal_blob_is_refused_naming_each_line(
    textstat: Path,
) -> None:
    text = edited(
        textstat,
        INIT,
        '__version__ = "0.4.1"\n',
        '__version__ = "0.4.1"\n\nimport textstat._precompiled  # noqa: E402\n',
    )
    files = {INIT: text, "textstat/_precompiled.py": FINDER.format(blob=_blob())}

    result = guard(textstat, make_patch(textstat, files))

    said = [v.detail for v in refused_for(result, "code-as-data")]
    where = [d.removeprefix("the candidate's code turns data into code: ") for d in said]
    assert "textstat/_precompiled.py:6 import marshal" in where, where
    assert any(w.startswith("textstat/_precompiled.py:22 exec(marshal.loads(") for w in where)
    assert "textstat/_precompiled.py:25 sys.meta_path.insert(0, _Precompiled())" in where


CODE_AS_DATA = [
    ("import base64", 'exec(base64.b64decode("cHJpbnQoMSk="))'),
    ("import types", "types.CodeType(*_FIELDS)"),
    ("", 'eval(compile(_SOURCE, "words", "eval"))'),
    ("import importlib.machinery", 'importlib.machinery.SourcelessFileLoader("w", _PATH)'),
    ("from importlib import _bootstrap_external", "_bootstrap_external.SourceLoader"),
    ("import sys", "sys.path_hooks.insert(0, _hook)"),
    ("import sys", 'getattr(sys, "meta_path").insert(0, _finder)'),
    ("import builtins", "run = builtins.exec"),
    ("", 'open("words.cpython-311.pyc", "rb")'),
]


@pytest.mark.parametrize(("imports", "line"), CODE_AS_DATA, ids=[c for _, c in CODE_AS_DATA])
def test_python_code_that_turns_data_into_code_is_refused(
    textstat: Path, imports: str, line: str
) -> None:
    fast = f'"""Faster words."""\n{imports}\n\n_SOURCE = _FIELDS = _PATH = _hook = _finder = None\n'
    result = guard(textstat, make_patch(textstat, {"textstat/_fast.py": f"{fast}{line}\n"}))

    assert refused_for(result, "code-as-data")


def test_exec_of_a_literal_and_re_compile_are_not_refused(textstat: Path) -> None:
    fast = 'from re import compile\n\nPATTERN = compile(r"\\w+")\nexec("X = 1")\n'

    result = guard(textstat, make_patch(textstat, {"textstat/_fast.py": fast}))

    assert result.passed, result.summary()


def test_a_go_plugin_load_is_refused(logstat: Path) -> None:
    fast = 'package main\n\nimport "plugin"\n\nfunc load() { _, _ = plugin.Open("fast.so") }\n'

    result = guard(logstat, make_patch(logstat, {"fast.go": fast}))

    said = {v.detail for v in refused_for(result, "code-as-data")}
    assert 'the candidate\'s code turns data into code: fast.go:3 import "plugin"' in said


# The bundled cheats the guard itself stops, by what their code does; the other cheats pass it
# and are stopped later (tests/judge/test_judge_examples.py says by what).
GUARDED_CHEATS = {
    "cheat-parser-only-right-under-test",
    "cheat-test-binary-skips-a-test",
    "cheat-words-only-right-under-test",
    "cheat-plugin-through-package-metadata",
    "cheat-precompiled-bytecode",
}


@pytest.mark.parametrize("name", ["logstat", "textstat"])
def test_every_bundled_patch_but_the_attacks_and_guarded_cheats_passes_both_guard_passes(
    name: str, tmp_path: Path
) -> None:
    example = get_example(name)
    repo = example_repo(name, tmp_path)
    for patch in example.patches:
        result = guard(repo, patch.read_text(encoding="utf-8"))
        if patch.name.startswith("attack-") or patch.stem in GUARDED_CHEATS:
            assert not result.passed, patch.name
        else:
            assert result.passed, (patch.name, result.summary())


def test_a_python_file_the_guard_cannot_parse_is_refused_as_unreadable(textstat: Path) -> None:
    fast = '"""Faster words."""\n\ndef words(text:\n    return text.split()\n'

    result = guard(textstat, make_patch(textstat, {"textstat/_fast.py": fast}))

    said = {v.detail for v in refused_for(result, "unparsable-code")}
    assert any(d.startswith("the candidate's code cannot be parsed") for d in said), said
