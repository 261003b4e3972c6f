"""The Python toolchain: byte-compile builds and pytest's JUnit report, run for real."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import run_process
from speedproof.judge.build.python import junit_id, parse_junit
from support.git import git
from support.toolchain import (
    PYTEST_TESTS,
    PYTHON_FILES,
    PYTHON_MANIFEST,
    manifest,
    sandbox,
    toolchain,
    tree_of,
)


def test_a_python_build_byte_compiles_outside_the_worktree_and_runs_the_module(
    tmp_path: Path,
) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)
    tc = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS))

    built = tc.build(tree)

    assert built.ok, built.log
    assert built.commands[0][1:4] == ("-I", "-B", "-X")
    assert built.commands[0][5:8] == ("-m", "compileall", "-q")
    assert list((tree.out / "pycache").rglob("core.*.pyc"))
    program = built.program
    assert program is not None
    assert program.argv == (sys.executable, "-m", "textpkg")
    assert program.env["PYTHONDONTWRITEBYTECODE"] == "1"
    ran = run_process(
        [*program.argv, "one", "two"],
        cwd=program.root,
        sandbox=sandbox(),
        spec=program.spec(),
        timeout_s=30,
    )
    assert ran.stdout == b"2 0\n"  # two words, PYTHONHASHSEED=0
    # Nothing written into the worktree: no __pycache__, no stray files.
    assert git(tree.worktree, "status", "--porcelain", "--ignored") == ""
    assert tc.versions()["python_chosen_by"] == "speedproof's own interpreter"


def test_a_script_target_runs_the_script_from_the_worktree(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)
    target = 'name = "count"\nlanguage = "python"\nscript = "bin/count.py"'

    built = toolchain(manifest(target, PYTEST_TESTS)).build(tree)

    assert built.program is not None
    assert built.program.argv == (sys.executable, str(tree.root.resolve() / "bin" / "count.py"))


def test_a_python_syntax_error_fails_the_byte_compile(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)
    (tree.root / "textpkg" / "core.py").write_text("def count_words(text:\n    return 1\n")

    built = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS)).build(tree)

    assert not built.ok and built.program is None
    assert "core.py" in built.log and "SyntaxError" in built.log


def test_pytest_outcomes_are_keyed_by_node_id_from_the_junit_report(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)

    run = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS)).run_tests(tree)

    assert run.ran, run.note
    assert run.outcomes == {
        "tests/test_core.py::test_counts_words": "passed",
        "tests/test_core.py::test_known_bug": "failed",
        "tests/test_core.py::test_skipped": "skipped",
        "tests/test_core.py::test_supported": "passed",
        "tests/test_core.py::TestCounting::test_param[-0]": "passed",
        "tests/test_core.py::TestCounting::test_param[one two-2]": "passed",
        "tests/test_core.py::test_uses_broken_fixture": "error",
        "tests/test_flaky.py::test_flaky": "passed",
        # A module that does not import: one error under the file's own path.
        "tests/test_imports_missing.py": "error",
    }
    assert "HI!!" in run.failures["tests/test_core.py::test_known_bug"]
    assert "not_a_module_anywhere" in run.failures["tests/test_imports_missing.py"]
    # No .pytest_cache, no __pycache__: only the flaky test's own counter file.
    assert git(tree.worktree, "status", "--porcelain", "--ignored") == "!! tests/runs.count"


def test_selected_pytest_node_ids_re_run_alone(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)
    wanted = [
        "tests/test_core.py::TestCounting::test_param[one two-2]",
        "tests/test_core.py::test_known_bug",
    ]

    run = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS)).run_tests(tree, only=wanted)

    assert run.outcomes == {wanted[0]: "passed", wanted[1]: "failed"}


def test_a_pytest_run_without_a_report_did_not_run_rather_than_passed(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, PYTHON_FILES)
    tests = 'runner = "pytest"\nargs = ["--no-such-option"]'

    run = toolchain(manifest(PYTHON_MANIFEST, tests)).run_tests(tree)

    assert not run.ran and run.outcomes == {}
    assert "exit code 4" in run.note


def test_an_unreadable_junit_report_is_an_error_not_an_empty_pass() -> None:
    with pytest.raises(ValueError, match="not XML"):
        parse_junit(b"<testsuites><testcase name='x'>")
    with pytest.raises(ValueError, match="root"):
        parse_junit(b"<html/>")


def test_junit_cases_map_back_to_pytest_node_ids() -> None:
    assert junit_id("tests/test_a.py", "tests.test_a", "test_x") == "tests/test_a.py::test_x"
    assert (
        junit_id("tests/test_a.py", "tests.test_a.TestOuter.TestInner", "test_y[a::b]")
        == "tests/test_a.py::TestOuter::TestInner::test_y[a::b]"
    )
    assert junit_id("tests/test_b.py", "", "tests.test_b") == "tests/test_b.py"
    assert junit_id(None, "pkg.mod", "test_z") == "pkg.mod::test_z"


def test_a_manifest_interpreter_that_does_not_exist_is_an_infrastructure_error() -> None:
    target = PYTHON_MANIFEST + '\ninterpreter = "/nonexistent/python9"'
    with pytest.raises(InfrastructureError, match="python9"):
        toolchain(manifest(target, PYTEST_TESTS))


def test_a_manifest_interpreter_is_used_and_recorded(tmp_path: Path) -> None:
    target = PYTHON_MANIFEST + f'\ninterpreter = "{sys.executable}"'
    tc = toolchain(manifest(target, PYTEST_TESTS))
    versions = tc.versions()
    assert versions["python_interpreter"] == sys.executable
    assert versions["python_chosen_by"] == "the manifest's interpreter"
    assert versions["python"] == sys.version.split()[0]
    assert versions["pytest"] == pytest.__version__
