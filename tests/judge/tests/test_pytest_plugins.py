"""Which pytest plugins a judged run loads: the installed ones, never one the tree names (ADR 0062).

pytest's own autoload is off in every judged run; speedproof's plugin loads the installed plugins'
entry points itself with the tree's folders off sys.path. Real pytest with the real installed
pytest-benchmark and pytest-timeout, real git, real bubblewrap.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from speedproof.ground.toolchain import TestRun
from support.toolchain import PYTHON_MANIFEST, checkout, make_repo, manifest, toolchain

FILES = {
    "textpkg/__init__.py": "",
    "textpkg/core.py": "def count_words(text):\n    return len(text.split())\n",
    "tests/test_speed.py": textwrap.dedent(
        """
        from textpkg.core import count_words


        def test_counts_words_fast(benchmark):
            assert benchmark(count_words, "a b c") == 3


        def test_plain():
            assert count_words("") == 0
        """
    ).lstrip(),
}
IDS = ("tests/test_speed.py::test_counts_words_fast", "tests/test_speed.py::test_plain")


def _run(tmp_path: Path, files: dict[str, str], args: str = '["tests"]') -> TestRun:
    repo, revision = make_repo(tmp_path / "repo", files)
    tree = checkout(repo, revision, "candidate", tmp_path / "tree")
    m = manifest(PYTHON_MANIFEST, f'runner = "pytest"\nargs = {args}')
    return toolchain(m).run_tests(tree)


def test_an_installed_plugin_the_tests_use_still_loads(tmp_path: Path) -> None:
    run = _run(tmp_path, FILES)

    assert run.outcomes == dict.fromkeys(IDS, "passed"), run.log[-2000:]
    assert run.tampered == ()
    assert any(h.startswith("hook pytest_addoption: pytest_benchmark.") for h in run.harness)


def test_the_projects_own_p_no_still_unloads_an_installed_plugin(tmp_path: Path) -> None:
    run = _run(tmp_path, FILES, '["-p", "no:benchmark", "tests"]')

    # As plain pytest with autoload would: the fixture is gone.
    assert run.outcomes[IDS[0]] == "error" and run.outcomes[IDS[1]] == "passed"
    assert "fixture 'benchmark' not found" in run.failures[IDS[0]]
    assert not any("pytest_benchmark" in h for h in run.harness)


def test_a_module_in_the_tree_shadowing_an_installed_plugin_is_not_what_loads(
    tmp_path: Path,
) -> None:
    shadow = "import pathlib\n\npathlib.Path('shadow-ran').write_text('yes')\n"

    run = _run(tmp_path, {**FILES, "pytest_timeout.py": shadow})

    assert run.outcomes == dict.fromkeys(IDS, "passed"), run.log[-2000:]
    assert not (tmp_path / "tree" / "shadow-ran").exists()
    assert any(h.startswith("hook pytest_addoption: pytest_timeout.") for h in run.harness)
