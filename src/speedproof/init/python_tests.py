"""How a Python project's tests run: pytest (configured or not), unittest, or nothing found.

pytest is chosen wherever it is configured (`[tool.pytest.ini_options]` in pyproject.toml,
`[pytest]` in pytest.ini or tox.ini, `[tool:pytest]` in setup.cfg), its `testpaths` becoming
`[tests] args`. Without a configuration, a `tests/` (or `test/`) folder whose files define
`unittest.TestCase` classes and no module-level `test_` functions is a unittest suite: the
`unittest` runner (`discover -s tests -t .`) when the manifest schema has one, else pytest,
which collects TestCase classes test by test, when the interpreter has pytest, else `python -m
unittest discover` as a command (one pass or fail for the whole suite). Any other test folder
is pytest's.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any, get_args

from speedproof.init.files import read_text
from speedproof.init.model import TestSetup
from speedproof.manifest import Runner

TEST_FOLDERS = ("tests", "test")
# (file, section, how it is named in words); pyproject.toml is read as TOML, before these.
_INI_SECTIONS = (
    ("pytest.ini", "pytest", "pytest.ini [pytest]"),
    ("setup.cfg", "tool:pytest", "setup.cfg [tool:pytest]"),
    ("tox.ini", "pytest", "tox.ini [pytest]"),
)
_TEST_CASE = re.compile(r"\bclass\s+\w+\s*\([^)]*\bTestCase\b")
_MODULE_TEST = re.compile(r"^def\s+test_?\w*\s*\(", re.MULTILINE)
# With no test folder, the test gate needs some command; `true` passes on every side, and the
# comment above it says the gate then checks nothing.
NO_TESTS = ("true",)


def pytest_config(root: Path, pyproject: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(where pytest is configured, its testpaths), or None when it is not."""
    options = pyproject.get("tool", {}).get("pytest", {}).get("ini_options")
    if isinstance(options, dict):
        paths = options.get("testpaths", ())
        paths = paths.split() if isinstance(paths, str) else paths
        return "pyproject.toml [tool.pytest.ini_options]", tuple(str(p) for p in paths)
    for file_name, section, named in _INI_SECTIONS:
        path = root / file_name
        if not path.is_file():
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            return named, tuple(parser.get(section, "testpaths", fallback="").split())
    return None


def _unittest_style(folder: Path) -> bool:
    """Whether the folder's test files define TestCase classes and no module-level tests."""
    texts = [read_text(p) for p in sorted(folder.rglob("test*.py"))]
    uses_cases = any(_TEST_CASE.search(t) and "unittest" in t for t in texts)
    return uses_cases and not any(_MODULE_TEST.search(t) for t in texts)


def _unittest(folder: str, *, has_pytest: bool, executable: str | None) -> TestSetup:
    found_by = f"unittest TestCase classes in {folder}/"
    discover = ("discover", "-s", folder, "-t", ".")
    if "unittest" in get_args(Runner):
        return TestSetup("unittest", discover, found_by)
    if has_pytest:
        note = "pytest collects TestCase classes, and the gate names every test"
        return TestSetup("pytest", (folder,), found_by, note)
    python = executable or "python3"
    note = (
        "a command: the gate sees one pass or fail for the whole suite; with pytest installed "
        "it names each test"
    )
    return TestSetup("command", (python, "-m", "unittest", *discover), found_by, note)


def detect_tests(
    root: Path, pyproject: dict[str, Any], *, has_pytest: bool, executable: str | None
) -> TestSetup:
    folder = next((name for name in TEST_FOLDERS if (root / name).is_dir()), None)
    config = pytest_config(root, pyproject)
    if config is not None:
        named, paths = config
        args = paths or ((folder,) if folder else ())
        return TestSetup("pytest", args, f"pytest configuration in {named}")
    if folder is None:
        note = "no tests/ or test/ folder: the test gate checks nothing until [tests] names them"
        return TestSetup("command", NO_TESTS, "no tests found", note)
    if _unittest_style(root / folder):
        return _unittest(folder, has_pytest=has_pytest, executable=executable)
    return TestSetup("pytest", (folder,), f"test files in {folder}/ (no pytest configuration)")
