"""A candidate that forges its pytest results is caught: real pytest, real git, real bubblewrap.

Each attack is what a patch could add to a small project whose candidate breaks three tests:
the files are written into the candidate's worktree directly, as if the guard had let them
through, so the test gate itself is what must notice (or, for start-up hooks, never run them).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.guard.check import check_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.tests.gate import gate_tests, run_baseline_tests
from support.toolchain import Pair, manifest, pair, toolchain, write_files


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip()


FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    # Loaded by the project's own conftest, as many projects load shared fixtures: the module
    # is target code, open to a patch, while the conftest itself is protected.
    "calc/fixtures.py": "",
    "tests/conftest.py": 'pytest_plugins = ["calc.fixtures"]\n',
    "tests/test_ops.py": _text(
        """
        from calc.ops import add


        def test_small():
            assert add(1, 2) == 3


        def test_negative():
            assert add(-1, -2) == -3


        def test_zero():
            assert add(0, 5) == 5


        def test_unrelated():
            assert "a" * 2 == "aa"
        """
    ),
}
TARGET = 'name = "calc"\nlanguage = "python"\nmodule = "calc"'
PYTEST = manifest(TARGET, 'runner = "pytest"\nargs = ["tests"]')
BROKEN = ("test_negative", "test_small", "test_zero")

# The three broken tests read as passed: every <failure> and <error> is dropped from the JUnit
# report pytest wrote, wherever it was written (pytest's own LogXML object knows the path).
FORGE = _text(
    """
    import gc
    import re


    def forge():
        from _pytest.junitxml import LogXML

        for found in gc.get_objects():
            if isinstance(found, LogXML):
                with open(found.logfile) as handle:
                    report = handle.read()
                report = re.sub(r"<(failure|error)\\b.*?</\\1>", "", report, flags=re.S)
                report = re.sub(r'(failures|errors)="\\d+"', '\\\\1="0"', report)
                with open(found.logfile, "w") as handle:
                    handle.write(report)
    """
)

# A report in which all four tests passed, written before the process leaves without pytest
# ever finishing its session.
PASSING_REPORT = _text(
    """
    import os

    PASSED = '''<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
    errors="0" failures="0" skipped="0" tests="4">{}</testsuite></testsuites>'''


    def forge_and_leave():
        from _pytest.junitxml import LogXML
        import gc

        cases = "".join(
            f'<testcase classname="tests.test_ops" name="{name}" file="tests/test_ops.py"/>'
            for name in ("test_small", "test_negative", "test_zero", "test_unrelated")
        )
        for found in gc.get_objects():
            if isinstance(found, LogXML):
                with open(found.logfile, "w") as handle:
                    handle.write(PASSED.format(cases))
        os._exit(0)
    """
)


def _break(p: Pair, extra: dict[str, str]) -> None:
    """The candidate: `add` subtracts, failing three tests, plus the attack's files."""
    write_files(p.candidate.root, {"calc/ops.py": "def add(a, b):\n    return a - b\n", **extra})


def _gate(p: Pair, tmp_path: Path) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    result, _, _ = gate_tests(
        toolchain(PYTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )
    return result.passed, result.reasons(), result.newly_failing


def _ids(*names: str) -> tuple[str, ...]:
    return tuple(f"tests/test_ops.py::{name}" for name in names)


def test_an_honest_candidate_that_breaks_nothing_still_passes_and_says_what_was_checked(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    write_files(p.candidate.root, {"calc/ops.py": "def add(a, b):\n    return b + a\n"})

    result, base, cand = gate_tests(
        toolchain(PYTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert result.passed, result.reasons()
    assert result.tampered == ()
    assert base.collected == cand.collected == 4
    assert set(cand.outcomes) == set(_ids("test_small", "test_negative", "test_zero")) | set(
        _ids("test_unrelated")
    )
    assert any(line.startswith("cross-checked:") for line in result.detail), result.detail


def test_an_honest_candidate_that_breaks_tests_is_charged_by_name_and_not_as_tampering(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    _break(p, {})

    passed, reasons, failing = _gate(p, tmp_path)

    assert not passed
    assert failing == _ids(*BROKEN)
    assert not any("tampered" in r for r in reasons), reasons


def test_a_root_sitecustomize_that_rewrites_the_report_is_refused_and_never_runs(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    hook = FORGE + "\n\nimport atexit\n\natexit.register(forge)\n"
    _break(p, {"sitecustomize.py": hook})

    passed, _, failing = _gate(p, tmp_path)

    # Never imported: the tests run without the tree on the start-up path, so the three
    # failures stay failures.
    assert not passed
    assert failing == _ids(*BROKEN)
    # And the guard would not have let the file in.
    rules = ProtectedPaths.build("python")
    for name in ("sitecustomize.py", "usercustomize.py", "calc/site.pth", "deep/a/conftest.py"):
        assert rules.reason(name), name
    assert "start-up hook" in str(rules.reason("sitecustomize.py"))


def test_a_pth_file_and_usercustomize_in_the_tree_do_not_run_either(tmp_path: Path) -> None:
    p = pair(tmp_path, FILES)
    hook = FORGE + "\n\nimport atexit\n\natexit.register(forge)\n"
    _break(
        p,
        {
            "usercustomize.py": hook,
            "calc/forge_at_exit.py": hook,
            "forge.pth": "import calc.forge_at_exit\n",
            "calc/forge.pth": "import calc.forge_at_exit\n",
        },
    )

    passed, reasons, failing = _gate(p, tmp_path)

    assert not passed
    assert failing == _ids(*BROKEN)
    assert not any("tampered" in r for r in reasons), reasons


def test_an_imported_module_that_rewrites_the_report_at_exit_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    ops = "import atexit\n\n" + FORGE + "\n\natexit.register(forge)\n\n\ndef add(a, b):\n"
    write_files(p.candidate.root, {"calc/ops.py": ops + "    return a - b\n"})

    passed, reasons, _ = _gate(p, tmp_path)

    assert not passed
    tampered = [r for r in reasons if r.startswith("test results tampered with")]
    assert tampered, reasons
    assert "JUnit report" in tampered[0] and "test_small" in tampered[0]


def test_a_module_that_forges_a_report_and_exits_early_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    ops = PASSING_REPORT + "\n\ndef add(a, b):\n    forge_and_leave()\n"
    write_files(p.candidate.root, {"calc/ops.py": ops})

    passed, reasons, _ = _gate(p, tmp_path)

    assert not passed
    tampered = [r for r in reasons if r.startswith("test results tampered with")]
    assert tampered, reasons
    assert "session never finished" in tampered[0]


def test_a_module_that_resets_the_exit_status_at_exit_is_rejected_as_tampering(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    ops = "import atexit\nimport os\n\n" + FORGE
    ops += "\n\natexit.register(lambda: (forge(), os._exit(0)))\n\n\ndef add(a, b):\n"
    write_files(p.candidate.root, {"calc/ops.py": ops + "    return a - b\n"})

    passed, reasons, _ = _gate(p, tmp_path)

    assert not passed
    tampered = [r for r in reasons if r.startswith("test results tampered with")]
    assert tampered and "exit" in tampered[0], reasons


def test_a_plugin_loaded_by_a_protected_conftest_that_hides_failures_is_rejected(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    hides = _text(
        """
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
            report.longrepr = None
        """
    )
    _break(p, {"calc/fixtures.py": hides})

    passed, reasons, _ = _gate(p, tmp_path)

    assert not passed
    tampered = [r for r in reasons if r.startswith("test results tampered with")]
    assert tampered, reasons
    assert "failures into passes" in tampered[0] and "test_small" in tampered[0]


def test_a_hook_that_drops_failing_tests_from_the_collection_is_rejected_by_name(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, FILES)
    drops = _text(
        """
        def pytest_collection_modifyitems(items):
            items[:] = [i for i in items if i.name == "test_unrelated"]
        """
    )
    _break(p, {"calc/fixtures.py": drops})

    passed, reasons, _ = _gate(p, tmp_path)

    assert not passed
    tampered = [r for r in reasons if r.startswith("test results tampered with")]
    assert tampered, reasons
    assert "test_small" in tampered[0] and "collected 1" in tampered[0]


def test_a_baseline_whose_results_disagree_is_an_infrastructure_error(tmp_path: Path) -> None:
    files = {
        **FILES,
        "calc/fixtures.py": "import atexit\n\n" + FORGE + "\natexit.register(forge)\n",
    }
    files["tests/test_ops.py"] += "\n\ndef test_broken_before():\n    assert False\n"
    p = pair(tmp_path, files)

    with pytest.raises(InfrastructureError, match="tampered"):
        run_baseline_tests(toolchain(PYTEST), p.baseline, revision=p.revision, cache_dir=tmp_path)


def test_the_guard_refuses_a_patch_adding_start_up_hooks_and_names_the_rule() -> None:
    patch = "".join(
        f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n"
        "@@ -0,0 +1 @@\n+import atexit\n"
        for name in ("sitecustomize.py", "calc/hook.pth", "calc/deep/conftest.py")
    )

    result = check_patch(patch, ProtectedPaths.build("python"))

    assert not result.passed
    said = result.summary()
    assert "'sitecustomize.py' is protected: Python start-up hook (`sitecustomize.py`)" in said
    assert "'calc/hook.pth' is protected: Python start-up hook (`*.pth`)" in said
    assert "pytest conftest" in said
