"""The pytest gate re-runs suspects with the user's own arguments and names tests by node id.

Real pytest in real worktrees under bubblewrap: a suite whose classes are found through
`-o python_classes=...` given as two tokens, and a legacy unittest suite whose shared test
methods live in a base module (pytest's JUnit `file` is then the base module, not the test's).
"""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.tests.gate import gate_tests
from support.toolchain import PYTHON_MANIFEST, _text, manifest, pair, toolchain, write_files

CALC = {
    "textpkg/__init__.py": "",
    "textpkg/__main__.py": "print('ok')\n",
    "textpkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
}

CHECK_SUITE = {
    **CALC,
    "tests/test_calc.py": _text(
        """
        from textpkg.calc import add, mul


        class CheckAdding:
            def test_add(self):
                assert add(2, 3) == 5


        class CheckMultiplying:
            def test_mul(self):
                assert mul(2, 3) == 6
        """
    ),
}

LEGACY_SUITE = {
    **CALC,
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    "tests/__init__.py": "",
    # Shared checks in a helper module: pytest's JUnit report gives their `file` as
    # tests/base.py while their node ids are under tests/test_calc.py.
    "tests/base.py": _text(
        """
        from textpkg.calc import add


        class AddingChecks:
            def test_add(self):
                self.assertEqual(add(2, 3), 5)
        """
    ),
    "tests/test_calc.py": _text(
        """
        import unittest

        from tests.base import AddingChecks
        from textpkg.calc import mul


        class T(AddingChecks, unittest.TestCase):
            def test_mul(self):
                self.assertEqual(mul(2, 3), 6)
        """
    ),
}

BROKEN_ADD = CALC["textpkg/calc.py"].replace("a + b", "a - b")


def test_a_break_under_two_token_override_ini_arguments_is_rejected_by_name(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, CHECK_SUITE)
    write_files(p.candidate.root, {"textpkg/calc.py": BROKEN_ADD})
    m = manifest(
        PYTHON_MANIFEST, 'runner = "pytest"\nargs = ["-o", "python_classes=Check", "tests"]'
    )

    result, base, _ = gate_tests(
        toolchain(m), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert base.ids("passed") == (
        "tests/test_calc.py::CheckAdding::test_add",
        "tests/test_calc.py::CheckMultiplying::test_mul",
    )
    assert not result.passed
    assert result.newly_failing == ("tests/test_calc.py::CheckAdding::test_add",)
    # Re-checked twice on both sides, and still failing on the candidate only.
    assert any("the baseline failed it 0 of 2" in line for line in result.detail), result.detail


def test_a_break_in_a_unittest_suite_whose_report_names_another_file_is_rejected_by_name(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, LEGACY_SUITE)
    write_files(p.candidate.root, {"textpkg/calc.py": BROKEN_ADD})
    m = manifest(PYTHON_MANIFEST, 'runner = "pytest"')

    result, base, _ = gate_tests(
        toolchain(m), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert base.ids("passed") == (
        "tests/test_calc.py::T::test_add",
        "tests/test_calc.py::T::test_mul",
    )
    assert not result.passed
    assert result.newly_failing == ("tests/test_calc.py::T::test_add",)
    assert any("the baseline failed it 0 of 2" in line for line in result.detail), result.detail


def test_a_break_in_a_suite_run_from_another_rootdir_is_rejected_by_name(tmp_path: Path) -> None:
    p = pair(tmp_path, LEGACY_SUITE)
    write_files(p.candidate.root, {"textpkg/calc.py": BROKEN_ADD})
    m = manifest(PYTHON_MANIFEST, 'runner = "pytest"\nargs = ["--rootdir=tests"]')

    result, base, _ = gate_tests(
        toolchain(m), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert base.ids("passed") == ("test_calc.py::T::test_add", "test_calc.py::T::test_mul")
    assert result.newly_failing == ("test_calc.py::T::test_add",)
