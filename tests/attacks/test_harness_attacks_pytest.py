"""A Python candidate cannot reconfigure the pytest harness that judges it (ADR 0062).

Each attack is a candidate of the bundled textstat example: its real `breaks-test-apostrophes`
patch (four tests fail) plus code that makes pytest report those failures as passes before any
report exists, so speedproof's record, the JUnit report and the exit status all agree. Real git
worktrees, real pytest, real bubblewrap, the real test gate.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.example_pair import example_pair, gate, patched

BROKEN = "breaks-test-apostrophes"


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _package_init(p_root: Path, extra: str) -> dict[str, str]:
    init = (p_root / "textstat" / "__init__.py").read_text(encoding="utf-8")
    return {"textstat/__init__.py": init + "\n" + extra}


# Imported at collection with the package: every assertion failure in a test is swallowed.
SWALLOW_RUNTEST = _text(
    """
    def _swallow():
        import sys

        python = sys.modules.get("_pytest.python")
        if python is None:
            return
        original = python.Function.runtest

        def runtest(self):
            try:
                original(self)
            except AssertionError:
                pass

        python.Function.runtest = runtest


    _swallow()
    """
)

# The same, one level down: pytest's call of the test function through its runner.
SWALLOW_CALL = _text(
    """
    def _swallow():
        import sys

        runner = sys.modules.get("_pytest.runner")
        if runner is None:
            return
        original = runner.CallInfo.from_call.__func__

        def from_call(cls, func, when, reraise=None):
            info = original(cls, func, when, reraise)
            if when == "call" and info.excinfo is not None:
                if info.excinfo.errisinstance(AssertionError):
                    return original(cls, lambda: None, when, reraise)
            return info

        runner.CallInfo.from_call = classmethod(from_call)


    _swallow()
    """
)

# A subclass's method is not Function.runtest: each item's class is pointed at one that swallows.
SWALLOW_BY_CLASS = _text(
    """
    def _swallow():
        import sys

        python = sys.modules.get("_pytest.python")
        if python is None:
            return

        class Quiet(python.Function):
            def runtest(self):
                try:
                    super().runtest()
                except AssertionError:
                    pass

        original = python.Function.setup

        def setup(self):
            self.__class__ = Quiet
            original(self)

        python.Function.setup = setup


    _swallow()
    """
)

# After collection: the first call of `words()`, inside a test, makes every later test's
# assertion failures disappear.
SWALLOW_LATER = _text(
    """
    _later_done = []


    def _swallow_later():
        import sys

        if _later_done:
            return
        _later_done.append(1)
        python = sys.modules["_pytest.python"]
        original = python.Function.runtest

        def runtest(self):
            try:
                original(self)
            except AssertionError:
                pass

        python.Function.runtest = runtest


    _words = words


    def words(text):
        _swallow_later()
        return _words(text)
    """
)

# At import, a plugin registered through the running pytest's own plugin manager, found in
# memory: no file names it, pytest's autoload plays no part.
REGISTER_AT_IMPORT = _text(
    """
    def _register():
        import gc
        import sys

        config = sys.modules.get("_pytest.config")
        if config is None:
            return
        for found in gc.get_objects():
            if isinstance(found, config.Config):
                from textstat import _tidy

                found.pluginmanager.register(_tidy, "tidy")
                return


    _register()
    """
)

# Registered by pytest's plugin autoload from a distribution at the repository root (the root is
# on sys.path as `python -m pytest` run there has it): trylast, so it is the innermost wrapper and
# flips each failing report before speedproof's plugin sees it.
PLUGIN = _text(
    """
    import pytest


    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(item, call):
        made = yield
        report = made.get_result()
        if report.failed:
            report.outcome = "passed"
            report.longrepr = None
    """
)
DIST_INFO = {
    "textstat_tidy-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: textstat-tidy\n"
    "Version: 1.0\n",
    "textstat_tidy-1.0.dist-info/entry_points.txt": "[pytest11]\ntidy = textstat._tidy\n",
    "textstat/_tidy.py": PLUGIN,
}


def test_the_bundled_breaking_patch_alone_is_charged_by_name(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, {})

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert len(result.newly_failing) == 4, result.reasons()
    assert result.tampered == ()


def test_a_package_that_wraps_function_runtest_at_import_is_rejected(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, _package_init(p.candidate.root, SWALLOW_RUNTEST))

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any("test machinery altered" in r and "Function.runtest" in r for r in result.reasons())


def test_a_package_that_wraps_callinfo_from_call_is_rejected(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, _package_init(p.candidate.root, SWALLOW_CALL))

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any(
        "test machinery altered" in r and "CallInfo.from_call" in r for r in result.reasons()
    )


def test_items_moved_to_a_subclass_that_swallows_failures_are_rejected(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, _package_init(p.candidate.root, SWALLOW_BY_CLASS))

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any("test machinery altered" in r for r in result.reasons()), result.reasons()


def test_a_plugin_autoloaded_from_a_dist_info_at_the_root_never_loads(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, DIST_INFO)

    result, _, cand = gate(p, tmp_path)

    assert not result.passed
    # Never loaded, the plugin flips nothing: the four broken tests are charged by name.
    assert len(result.newly_failing) == 4, result.reasons()
    assert not any("textstat._tidy" in h for h in cand.harness)


def test_a_runtest_wrapped_from_inside_a_test_after_collection_is_rejected(
    tmp_path: Path,
) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, {})
    words = (p.candidate.root / "textstat" / "words.py").read_text(encoding="utf-8")
    patched(p, None, {"textstat/words.py": words + "\n\n" + SWALLOW_LATER})

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any(
        "test machinery altered" in r and "Function.runtest was replaced" in r
        for r in result.reasons()
    ), result.reasons()


def test_a_plugin_registered_in_memory_at_import_is_rejected(tmp_path: Path) -> None:
    p = example_pair(tmp_path, "textstat")
    patched(p, BROKEN, {"textstat/_tidy.py": PLUGIN})
    patched(p, None, _package_init(p.candidate.root, REGISTER_AT_IMPORT))

    result, _, _ = gate(p, tmp_path)

    assert not result.passed
    assert any(
        "the baseline's run does not have hook pytest_runtest_makereport: textstat._tidy" in r
        for r in result.reasons()
    ), result.reasons()
