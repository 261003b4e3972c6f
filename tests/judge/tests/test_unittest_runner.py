"""How unittest runs for the test gate: speedproof's own runner, unittest's ids, a record that
cannot be taken back, and what `manifest validate` checks of it.

Real interpreters under real bubblewrap, in real git worktrees; the project is
`support.unittest_target`'s unless a test needs outcomes of another kind.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError, ManifestError
from speedproof.ground.toolchain import TestRun, Tree
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.tests.gate import gate_tests, run_baseline_tests
from speedproof.judge.tests.record_channel import RecordChannel
from speedproof.judge.tests.run_record import read_record
from speedproof.judge.tests.unittest_runner import RUNNER_FOLDER
from speedproof.manifest_loading import load_manifest, parse_manifest
from speedproof.preflight import check, describe
from support.toolchain import checkout, make_repo, manifest, pair, toolchain, write_files
from support.unittest_target import (
    BROKEN_ADD,
    FILES,
    IDS,
    KNOWN_BUG,
    MANIFEST,
    NEGATIVE,
    SMALL,
    text,
)

TARGET = 'name = "calc"\nlanguage = "python"\nmodule = "calc"'
DISCOVER = 'runner = "unittest"\nargs = ["discover", "-s", "tests", "-p", "test_*.py", "-t", "."]'
UNITTEST = manifest(TARGET, DISCOVER)


def _tree(tmp_path: Path, files: dict[str, str]) -> Tree:
    repo, revision = make_repo(tmp_path / "repo", files)
    return checkout(repo, revision, "candidate", tmp_path / "wt")


def test_outcomes_are_keyed_by_unittest_ids_and_cross_checked_with_the_exit_status(
    tmp_path: Path,
) -> None:
    run = toolchain(UNITTEST).run_tests(_tree(tmp_path, FILES))

    assert run.outcomes == {i: "failed" if i == KNOWN_BUG else "passed" for i in IDS}, run.log
    assert "0.30000000000000004 != 0.3" in run.failures[KNOWN_BUG]
    # The traceback starts in the test, not in unittest's own frames.
    assert "unittest/case.py" not in run.failures[KNOWN_BUG]
    assert (run.collected, run.tampered, run.modules) == (6, (), ())
    assert run.checked.startswith("6 outcomes recorded by speedproof's unittest runner")
    assert run.command[1:3] == ("-s", "-c")


EVERY_KIND = {
    "calc/__init__.py": "",
    "tests/__init__.py": "",
    "tests/test_gone.py": "import not_a_module_anywhere\n",
    "tests/test_elsewhere.py": "import unittest\n\nraise unittest.SkipTest('not on this OS')\n",
    "tests/test_module_set_up.py": text(
        """
        import unittest


        def setUpModule():
            raise RuntimeError("module set-up broke")


        class Anything(unittest.TestCase):
            def test_kept_out(self):
                pass
        """
    ),
    "tests/test_kinds.py": text(
        """
        import unittest


        class Plain(unittest.TestCase):
            def test_passes(self):
                pass

            def test_fails(self):
                self.assertEqual(1, 2)

            def test_errors(self):
                raise RuntimeError("broke")

            @unittest.skip("not today")
            def test_skipped(self):
                pass

            @unittest.expectedFailure
            def test_expected_failure(self):
                self.fail("expected")

            @unittest.expectedFailure
            def test_unexpected_success(self):
                pass

            def test_subtests_pass(self):
                for i in range(2):
                    with self.subTest(i=i):
                        self.assertLess(i, 5)

            def test_subtests_fail(self):
                for i in range(3):
                    with self.subTest(i=i):
                        self.assertLess(i, 1)


        class SetUpBreaks(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                raise RuntimeError("class set-up broke")

            def test_one(self):
                pass

            def test_two(self):
                pass


        class SetUpSkips(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                raise unittest.SkipTest("no service")

            def test_needs_service(self):
                pass


        class TearDownBreaks(unittest.TestCase):
            @classmethod
            def tearDownClass(cls):
                raise RuntimeError("class tear-down broke")

            def test_first(self):
                pass

            def test_last(self):
                pass
        """
    ),
}
KINDS = "tests.test_kinds."


def test_every_kind_of_unittest_outcome_is_counted_as_pytest_would_count_it(
    tmp_path: Path,
) -> None:
    run = toolchain(UNITTEST).run_tests(_tree(tmp_path, EVERY_KIND))

    assert run.tampered == (), run.log
    expected = {
        # Modules: one that does not import, one skipped whole as it imports.
        "tests.test_gone": "error",
        "tests.test_elsewhere": "skipped",
        "tests.test_module_set_up.Anything.test_kept_out": "error",
        KINDS + "Plain.test_passes": "passed",
        KINDS + "Plain.test_fails": "failed",
        KINDS + "Plain.test_errors": "error",
        KINDS + "Plain.test_skipped": "skipped",
        KINDS + "Plain.test_expected_failure": "skipped",
        KINDS + "Plain.test_unexpected_success": "failed",
        KINDS + "Plain.test_subtests_pass": "passed",
        KINDS + "Plain.test_subtests_fail": "failed",
        KINDS + "SetUpBreaks.test_one": "error",
        KINDS + "SetUpBreaks.test_two": "error",
        KINDS + "SetUpSkips.test_needs_service": "skipped",
        # A tear-down error goes to the last test of its class, as pytest reports it.
        KINDS + "TearDownBreaks.test_first": "passed",
        KINDS + "TearDownBreaks.test_last": "error",
    }
    assert run.outcomes == expected
    assert run.collected == 14
    assert run.modules == ("tests.test_elsewhere", "tests.test_gone")
    assert "not_a_module_anywhere" in run.failures["tests.test_gone"]
    assert "class set-up broke" in run.failures[KINDS + "SetUpBreaks.test_two"]
    assert "class tear-down broke" in run.failures[KINDS + "TearDownBreaks.test_last"]
    # The first failing subtest is the message kept, as for any test failing twice.
    assert "(i=1)" in run.failures[KINDS + "Plain.test_subtests_fail"]
    # A module that failed to import is one; a test that errors is a test.
    assert run.module_ids() == ("tests.test_elsewhere", "tests.test_gone")
    assert run.explains("tests.test_gone.Anything.test_x")
    assert not run.explains(KINDS + "Plain.test_errors")


def test_selected_ids_re_run_alone_with_their_class_fixtures_and_their_broken_module(
    tmp_path: Path,
) -> None:
    wanted = [KINDS + "SetUpBreaks.test_one", KINDS + "Plain.test_passes", "tests.test_gone.T.t"]

    run = toolchain(UNITTEST).run_tests(_tree(tmp_path, EVERY_KIND), only=wanted)

    assert run.outcomes == {
        KINDS + "SetUpBreaks.test_one": "error",
        KINDS + "Plain.test_passes": "passed",
        "tests.test_gone": "error",
    }
    assert (run.collected, run.tampered) == (2, ())


@pytest.mark.parametrize(
    ("args", "ran"),
    [
        pytest.param([], IDS, id="nothing: discovery from the target folder"),
        pytest.param(["-k", "primes"], IDS[3:5], id="-k: a name pattern"),
        pytest.param(
            ["tests.test_ops.TestPrimes", "tests.test_cli"], IDS[3:], id="names: modules, classes"
        ),
    ],
)
def test_the_manifests_arguments_reach_unittest_untouched(
    tmp_path: Path, args: list[str], ran: tuple[str, ...]
) -> None:
    listed = ", ".join(f'"{a}"' for a in args)
    m = manifest(TARGET, f'runner = "unittest"\nargs = [{listed}]')

    run = toolchain(m).run_tests(_tree(tmp_path, FILES))

    assert sorted(run.outcomes) == sorted(ran), run.log
    assert run.tampered == ()


def test_start_up_hooks_and_a_json_module_in_the_tree_never_run_before_either_runner(
    tmp_path: Path,
) -> None:
    stop = "raise SystemExit('{} of the tree ran')\n"
    # Programs the tests start do run start-up hooks (their PYTHONPATH names the tree, so that
    # they find the target): the CLI test is left out, the guard keeps such hooks out of patches.
    files = {
        **{name: source for name, source in FILES.items() if name != "tests/test_cli.py"},
        # Each would stop the interpreter before any test if it ran at start-up; `json.py` is what
        # an interpreter started with `-c` in the tree imports first when it imports json.
        "sitecustomize.py": stop.format("sitecustomize"),
        "usercustomize.py": stop.format("usercustomize"),
        "json.py": stop.format("json.py"),
        "hook.pth": "import sitecustomize\n",
        "tests/test_start.py": text(
            """
            import sys
            import unittest


            class StartUp(unittest.TestCase):
                def test_no_hook_ran(self):
                    self.assertNotIn("sitecustomize", sys.modules)
                    self.assertTrue(sys.flags.no_user_site)
                    self.assertFalse(sys.modules["json"].__file__.endswith("/wt/json.py"))
            """
        ),
    }
    tree = _tree(tmp_path, files)

    for runner in (UNITTEST, manifest(TARGET, 'runner = "pytest"\nargs = ["tests"]')):
        run = toolchain(runner).run_tests(tree)

        assert run.tampered == (), run.log
        assert len(run.ids("passed")) == 5 and len(run.ids("failed")) == 1, run.outcomes
        assert "of the tree ran" not in run.log


def test_start_up_hooks_written_into_a_candidate_never_run_and_its_breaks_are_charged_by_name(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    # As if the guard had let them through: the hooks would make the run leave "all passed".
    leave = "import os\n\nos._exit(0)\n"
    hooks = {"sitecustomize.py": leave, "usercustomize.py": leave, "calc/leave.pth": leave}
    write_files(p.candidate.root, {"calc/ops.py": BROKEN_ADD, **hooks})

    result, _, cand = gate_tests(
        toolchain(UNITTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert not result.passed
    # The CLI test's child process, whose PYTHONPATH names the tree, did run them: it printed
    # nothing. The test process never did: its two broken tests are charged, not forged.
    assert result.newly_failing == (IDS[5], NEGATIVE, SMALL)
    assert result.tampered == () and cand.tampered == ()


def test_a_candidate_whose_code_no_longer_imports_is_charged_for_the_module_not_as_tampering(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    write_files(p.candidate.root, {"calc/ops.py": "raise ImportError('gone')\n"})

    result, _, cand = gate_tests(
        toolchain(UNITTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert cand.modules == ("tests.test_ops",)
    assert result.tampered == ()
    assert "tests.test_ops" in result.newly_failing
    assert set(result.not_run) == {i for i in IDS[:5] if i != KNOWN_BUG}


def test_a_baseline_module_that_does_not_import_is_a_collection_error_and_a_test_error_is_not(
    tmp_path: Path,
) -> None:
    erring = {
        **FILES,
        "tests/test_errs.py": text(
            """
            import unittest


            class Errs(unittest.TestCase):
                def test_errors(self):
                    raise RuntimeError("a test that errors is a failing test")
            """
        ),
    }
    p = pair(tmp_path / "errs", erring)
    # Refused for failing too much (2 of 7), not for anything failing to collect.
    with pytest.raises(InfrastructureError) as caught:
        run_baseline_tests(toolchain(UNITTEST), p.baseline, revision=p.revision, cache_dir=tmp_path)
    assert "2 of 7 collected tests fail" in str(caught.value)
    assert "failed to collect" not in str(caught.value)

    gone = pair(tmp_path / "gone", {**FILES, "tests/test_gone.py": "import not_here\n"})
    with pytest.raises(InfrastructureError, match=r"1 failed to collect \(tests\.test_gone\)"):
        run_baseline_tests(
            toolchain(UNITTEST), gone.baseline, revision=gone.revision, cache_dir=tmp_path
        )


def test_a_baseline_run_is_cached_under_a_key_naming_the_runner_and_its_arguments(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    first = run_baseline_tests(
        toolchain(UNITTEST), p.baseline, revision=p.revision, cache_dir=tmp_path
    )
    again = run_baseline_tests(
        toolchain(UNITTEST), p.baseline, revision=p.revision, cache_dir=tmp_path
    )
    other = manifest(TARGET, 'runner = "unittest"\nargs = ["-k", "primes"]')
    narrower = run_baseline_tests(
        toolchain(other), p.baseline, revision=p.revision, cache_dir=tmp_path
    )

    assert not first.cached and again.cached and not narrower.cached
    assert again.outcomes == first.outcomes and again.modules == ()
    assert len(narrower.outcomes) == 2
    assert "unittest_runner" in toolchain(UNITTEST).versions()


def test_a_target_of_any_language_tested_by_unittest_has_its_python_tests_protected() -> None:
    rules = ProtectedPaths.build("command", runner="unittest")

    assert rules.reason("tests/test_ops.py") == "Python test file (`test_*.py`)"
    assert rules.reason("sitecustomize.py") == "Python start-up hook (`sitecustomize.py`)"
    assert ProtectedPaths.build("command", runner="command").reason("tests/test_ops.py") is None


def test_the_runner_folder_shown_to_test_runs_holds_nothing_else_of_speedproof() -> None:
    assert sorted(p.name for p in RUNNER_FOLDER.glob("*.py")) == [
        "__init__.py",
        "speedproof_unittest.py",
    ]


def test_lines_written_to_the_record_pipe_cannot_be_taken_back(tmp_path: Path) -> None:
    with RecordChannel() as channel:
        assert (channel.path.stat().st_mode & 0o777) == 0o200
        writer = os.open(channel.path, os.O_WRONLY | os.O_APPEND)
        os.write(writer, b'{"event": "collected", "count": 1}\n')
        # What a file would let a forger do: truncate and start again.
        with open(channel.path, "w") as forger:
            forger.write('{"event": "finished", "exitstatus": 0}\n')
        os.close(writer)
        said = channel.text()
    assert said == '{"event": "collected", "count": 1}\n{"event": "finished", "exitstatus": 0}\n'
    assert not channel.folder.exists()


def test_a_record_with_lines_after_its_end_or_twice_its_count_is_not_speedproofs() -> None:
    finished = '{"event": "finished", "exitstatus": 0, "replaced": []}'
    collected = '{"event": "collected", "count": 1}'
    report = '{"event": "report", "id": "m.T.t", "when": "call", "outcome": "passed"}'

    record = read_record("\n".join([collected, '{"event": "module", "id": "m"}', finished]))
    assert (record.collected, record.exitstatus, record.modules) == (1, 0, {"m"})
    for lines in ([collected, collected], [collected, finished, report], [finished, finished]):
        with pytest.raises(ValueError, match=r"second|after the run finished"):
            read_record("\n".join(lines))


def test_a_test_run_naming_its_modules_survives_its_json_form() -> None:
    run = TestRun(
        outcomes={"m": "error", "n.T.t": "passed"},
        ran=True,
        log="",
        duration_s=0.1,
        command=("python",),
        collected=1,
        modules=("m",),
    )

    assert TestRun.from_json(run.to_json()) == run
    assert TestRun.from_json({**run.to_json(), "modules": None}).modules is None
    assert run.explains("m.T.t") and not run.explains("mm.T.t")


# ----- the manifest ------------------------------------------------------------------------


def _refused(tests: str) -> str:
    text_ = f'[target]\n{TARGET}\n\n[tests]\n{tests}\n\n[[workloads]]\nid = "w"\n'
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text_, "speedproof.toml")
    return str(caught.value)


def test_unittest_arguments_it_would_misread_are_refused_naming_the_key_and_line() -> None:
    said = _refused('runner = "unittest"\nargs = ["-s", "tests"]')
    assert "speedproof.toml:8: `tests.args` (line 8)" in said
    assert 'begin args with "discover" (args = ["discover", "-s", "tests"])' in said

    assert '"discover" must be the first argument' in _refused(
        'runner = "unittest"\nargs = ["-v", "discover"]'
    )
    assert "'-p' needs a value after it" in _refused(
        'runner = "unittest"\nargs = ["discover", "-p"]'
    )
    assert "'unittest'" in _refused('runner = "nose"')
    # An option's value is a value, whatever it says; pytest's arguments are pytest's.
    manifest(TARGET, 'runner = "unittest"\nargs = ["-k", "discover"]')
    manifest(TARGET, 'runner = "pytest"\nargs = ["-s", "tests"]')


def _validated(tmp_path: Path, args: str, files: dict[str, str], extra: str = "") -> str:
    """`manifest validate`'s problems for the project with these unittest args, as printed."""
    text_ = MANIFEST.replace(
        'args = ["discover", "-s", "tests", "-p", "test_*.py", "-t", "."]', f"args = {args}"
    )
    make_repo(tmp_path / "repo", {**files, "speedproof.toml": text_ + extra})
    loaded = load_manifest(tmp_path / "repo")
    problems = check(loaded)
    return describe(loaded, problems) if problems else ""


def test_validate_accepts_the_project_as_it_is(tmp_path: Path) -> None:
    assert _validated(tmp_path, '["discover", "-s", "tests", "-t", "."]', FILES) == ""


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(
            '["discover", "-s", "spec"]',
            "the start folder 'spec' (-s) does not exist",
            id="a start folder that is not there",
        ),
        pytest.param(
            '["discover", "-s", "tests", "-t", "top"]',
            "the top-level folder 'top' (-t) does not exist",
            id="a top-level folder that is not there",
        ),
        pytest.param(
            '["discover", "-s", "tests", "-p", "spec_*.py"]',
            "matches the pattern 'spec_*.py' (-p), so unittest would find no test",
            id="a pattern no file matches",
        ),
        pytest.param(
            '["discover", "--no-such-option"]',
            "`python -m unittest` refuses these arguments (python -m unittest discover: error: "
            "unrecognized arguments: --no-such-option); fix [tests] args",
            id="an option unittest does not know",
        ),
        pytest.param(
            '["tests"]',
            "'tests' names the package",
            id="a package named alone",
        ),
    ],
)
def test_validate_names_unittest_arguments_that_cannot_work_with_a_fix(
    tmp_path: Path, args: str, said: str
) -> None:
    problems = _validated(tmp_path, args, FILES)

    assert "speedproof.toml:8: `tests.args` (line 8)" in problems, problems
    assert said in problems


def test_validate_names_discovered_test_files_a_patch_could_rewrite_until_they_are_protected(
    tmp_path: Path,
) -> None:
    checks = {
        **{k: v for k, v in FILES.items() if not k.startswith("tests/")},
        "checks/__init__.py": "",
        "checks/check_ops.py": FILES["tests/test_ops.py"],
    }
    args = '["discover", "-s", "checks", "-p", "check_*.py", "-t", "."]'

    problems = _validated(tmp_path / "open", args, checks)
    protected = _validated(tmp_path / "shut", args, checks, '\n[protect]\npaths = ["checks"]\n')

    assert "1 test file(s) unittest discovers are open to a patch (checks/check_ops.py)" in problems
    assert '[protect] paths = ["checks"]' in problems
    assert protected == ""


def test_validate_reads_arguments_with_the_target_interpreters_own_unittest(
    tmp_path: Path,
) -> None:
    # `--durations` is Python 3.12's: the interpreter that runs the tests decides.
    problems = _validated(tmp_path, '["discover", "-s", "tests", "--durations", "3"]', FILES)

    if sys.version_info < (3, 12):
        assert "unrecognized arguments: --durations" in problems
    else:
        assert problems == ""
