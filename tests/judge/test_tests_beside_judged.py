"""A real judgement with the tests' runs beside the stages after them: the verdict is the one the
stages in order give.

A toy Python target with a pytest suite; its test sleeps, so the behaviour gate is done long
before the tests are. A patch that breaks the test and changes the output is charged the
test, by name, as when the tests ran first; a patch that only changes the output is charged
the output, and its passing test run is still recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest
from support.git import git_run
from support.toy_target import PYTEST_SUITE, toy_manifest, toy_target

TOOL = "def double(x: int) -> int:\n    return x * 2\n\n\nprint(double(21))\n"
TEST = """\
import time

from tool import double


def test_double_doubles() -> None:
    time.sleep(2)  # the tests end well after the behaviour gate
    assert double(3) == 6
"""
# Two real judgements in the sandbox, 20-70 s each on a loaded 2-core machine.
pytestmark = pytest.mark.slow

MANIFEST = toy_manifest(name="doubler", language="python", tests=PYTEST_SUITE, instructions=False)


def _judged(tmp_path: Path, tool: str) -> Outcome:
    repo = toy_target(
        tmp_path / "doubler",
        MANIFEST,
        {"tool.py": TOOL, "tests/test_tool.py": TEST, "tests/conftest.py": CONFTEST},
    )
    (repo / "tool.py").write_text(tool)
    patch = git_run(repo, "diff").stdout
    git_run(repo, "checkout", "--", "tool.py")
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        judge = Judge(
            load_manifest(repo), sandbox=make_sandbox(), ledger=ledger, options=JudgeOptions()
        )
        return judge.judge(patch)


# The tests import tool.py from the project folder.
CONFTEST = "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1]))\n"


def test_a_patch_that_breaks_a_test_and_the_output_is_charged_the_test_by_name(
    tmp_path: Path,
) -> None:
    outcome = _judged(tmp_path, TOOL.replace("x * 2", "x * 3"))
    assert outcome.verdict.verdict == "rejected"
    reasons = " ".join(outcome.verdict.reasons)
    assert "test_double_doubles" in reasons
    assert "stdout" not in reasons
    gates = {g.name: g.passed for g in outcome.gates}
    assert gates["tests"] is False


def test_a_patch_that_only_changes_the_output_is_charged_the_output_after_its_tests_pass(
    tmp_path: Path,
) -> None:
    outcome = _judged(tmp_path, TOOL.replace("print(double(21))", "print(double(21) + 1)"))
    assert outcome.verdict.verdict == "rejected"
    assert "stdout" in " ".join(outcome.verdict.reasons)
    gates = {g.name: g.passed for g in outcome.gates}
    assert gates["behaviour"] is False
    assert gates["tests"] is True
