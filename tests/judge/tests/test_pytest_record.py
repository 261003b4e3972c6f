"""How pytest runs for the test gate: isolated start-up, speedproof's plugin, pytest's node ids.

Real pytest under real bubblewrap, in real git worktrees.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from speedproof.ground.toolchain import Tree
from speedproof.judge.build.python import PLUGIN_FOLDER, junit_key, read_record
from support.toolchain import PYTEST_TESTS, checkout, make_repo, manifest, toolchain

TARGET = 'name = "calc"\nlanguage = "python"\nmodule = "calc"'
PYTEST = manifest(TARGET, PYTEST_TESTS)


def _tree(tmp_path: Path, files: dict[str, str]) -> Tree:
    repo, revision = make_repo(tmp_path / "repo", files)
    return checkout(repo, revision, "candidate", tmp_path / "wt")


def test_ids_are_pytest_node_ids_even_for_a_test_defined_in_another_file(tmp_path: Path) -> None:
    # The JUnit report names the file a test function is written in: here `cases.py`, while
    # pytest's node id (what re-runs it) names the module that collected it.
    files = {
        "calc/__init__.py": "",
        "tests/cases.py": "class Cases:\n    def test_shared(self):\n        assert True\n",
        "tests/test_uses.py": "from cases import Cases\n\n\nclass TestUses(Cases):\n    pass\n",
    }
    tree = _tree(tmp_path, files)
    node_id = "tests/test_uses.py::TestUses::test_shared"

    run = toolchain(PYTEST).run_tests(tree)
    again = toolchain(PYTEST).run_tests(tree, only=[node_id])

    assert run.outcomes == {node_id: "passed"}, run.log
    assert run.tampered == () and run.collected == 1
    assert again.outcomes == {node_id: "passed"}


def test_the_tree_is_not_on_the_start_up_path_but_children_still_find_the_target(
    tmp_path: Path,
) -> None:
    files = {
        "calc/__init__.py": "VALUE = 7\n",
        # Would stop the interpreter at start-up, before pytest, if it ever ran there.
        "sitecustomize.py": "raise SystemExit('sitecustomize ran')\n",
        "tests/test_start.py": textwrap.dedent(
            """
            import os
            import subprocess
            import sys

            import calc


            def test_start_up_hooks_did_not_run():
                assert "sitecustomize" not in sys.modules
                assert not sys.flags.no_site and sys.flags.no_user_site


            def test_a_child_python_imports_the_target_as_its_cli_would():
                said = subprocess.run(
                    [sys.executable, "-S", "-c", "import calc; print(calc.VALUE)"],
                    capture_output=True, text=True, check=True,
                )
                assert said.stdout.strip() == "7"
                assert os.environ["PYTHONHASHSEED"] == "0"
            """
        ),
    }
    tree = _tree(tmp_path, files)

    run = toolchain(PYTEST).run_tests(tree)

    assert run.outcomes == {
        "tests/test_start.py::test_start_up_hooks_did_not_run": "passed",
        "tests/test_start.py::test_a_child_python_imports_the_target_as_its_cli_would": "passed",
    }, run.log
    assert run.command[1:3] == ("-s", "-c")


def test_the_plugin_folder_shown_to_test_runs_holds_nothing_else_of_speedproof() -> None:
    assert sorted(p.name for p in PLUGIN_FOLDER.glob("*.py")) == [
        "__init__.py",
        "speedproof_machinery.py",
        "speedproof_record.py",
    ]


def test_the_record_keeps_each_tests_worst_phase_and_failures_turned_into_passes() -> None:
    lines = [
        '{"event": "collected", "count": 2}',
        '{"event": "report", "id": "t.py::a", "when": "setup", "outcome": "passed"}',
        '{"event": "report", "id": "t.py::a", "when": "call", "outcome": "failed", "message": "x"}',
        '{"event": "report", "id": "t.py::a", "when": "teardown", "outcome": "passed"}',
        '{"event": "raw", "id": "t.py::b", "when": "call"}',
        '{"event": "report", "id": "t.py::b", "when": "call", "outcome": "passed"}',
        '{"event": "finished", "exitstatus": 1}',
    ]

    record = read_record("\n".join(lines))

    assert record.outcomes == {"t.py::a": "failed", "t.py::b": "passed"}
    assert record.messages == {"t.py::a": "x"}
    assert record.turned == {"t.py::b"}
    assert (record.collected, record.exitstatus) == (2, 1)


def test_junit_keys_follow_pytests_own_mangling_of_node_ids() -> None:
    assert junit_key("tests/test_a.py::TestX::test_y[a::b/c]") == (
        "tests.test_a.TestX",
        "test_y[a::b/c]",
    )
    assert junit_key("tests/test_b.py") == ("", "tests.test_b")


EVERY_KIND = {
    "calc/__init__.py": "",
    "tests/test_skipped_module.py": "import pytest\n\n"
    "pytest.skip('not here', allow_module_level=True)\n",
    "tests/test_kinds.py": textwrap.dedent(
        """
        import unittest

        import pytest


        @pytest.fixture
        def breaks_after():
            yield
            raise RuntimeError("teardown broke")


        @pytest.fixture
        def breaks_before():
            raise RuntimeError("setup broke")


        def test_teardown_error(breaks_after):
            pass


        def test_setup_error(breaks_before):
            pass


        def test_fails_and_teardown_errors(breaks_after):
            assert False


        @pytest.mark.xfail(reason="known")
        def test_xfailed():
            assert False


        @pytest.mark.xfail(reason="known")
        def test_xpassed():
            pass


        @pytest.mark.xfail(reason="known", strict=True)
        def test_xpassed_strictly():
            pass


        @pytest.mark.parametrize("path", ["a/b", "c::d", "e.py"])
        def test_odd_ids(path):
            assert path


        class TestOuter:
            class TestInner:
                def test_nested(self):
                    pass


        class Classic(unittest.TestCase):
            def test_plain(self):
                pass

            @unittest.expectedFailure
            def test_expected_failure(self):
                self.fail("expected")

            @unittest.skip("classic skip")
            def test_classic_skip(self):
                pass


        def test_subtests(subtests):
            for i in range(2):
                with subtests.test(i=i):
                    assert i < 5


        def test_subtests_failing(subtests):
            for i in range(3):
                with subtests.test(i=i):
                    assert i < 1
        """
    ),
}


def test_every_kind_of_outcome_reads_the_same_through_the_plugin_and_the_report(
    tmp_path: Path,
) -> None:
    tree = _tree(tmp_path, EVERY_KIND)

    run = toolchain(PYTEST).run_tests(tree)

    assert run.tampered == (), run.log
    kinds = "tests/test_kinds.py::"
    assert run.outcomes["tests/test_skipped_module.py"] == "skipped"
    assert run.outcomes[kinds + "test_teardown_error"] == "error"
    assert run.outcomes[kinds + "test_setup_error"] == "error"
    assert run.outcomes[kinds + "test_fails_and_teardown_errors"] == "error"
    assert run.outcomes[kinds + "test_xfailed"] == "skipped"
    assert run.outcomes[kinds + "test_xpassed"] == "passed"
    assert run.outcomes[kinds + "test_xpassed_strictly"] == "failed"
    assert run.outcomes[kinds + "test_odd_ids[c::d]"] == "passed"
    assert run.outcomes[kinds + "TestOuter::TestInner::test_nested"] == "passed"
    assert run.outcomes[kinds + "Classic::test_expected_failure"] == "skipped"
    assert run.outcomes[kinds + "Classic::test_classic_skip"] == "skipped"
    assert run.outcomes[kinds + "test_subtests"] == "passed"
    assert run.outcomes[kinds + "test_subtests_failing"] == "failed"
    assert "teardown broke" in run.failures[kinds + "test_teardown_error"]
