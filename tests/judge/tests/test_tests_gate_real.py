"""The test gate over real `go test` and pytest runs in real worktrees, under bubblewrap."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.tests.gate import gate_tests, run_baseline_tests
from support.toolchain import (
    GO_FILES,
    GO_MANIFEST,
    GO_MODULE,
    PYTHON_FILES,
    PYTHON_MANIFEST,
    manifest,
    pair,
    toolchain,
    write_files,
)

# The fixtures fail to build or collect on the baseline on purpose: allowed, so they are judged.
ALLOW = "allow_failing_baseline = true"
GO = manifest(GO_MANIFEST, f'runner = "go"\n{ALLOW}')
PYTEST = manifest(PYTHON_MANIFEST, f'runner = "pytest"\nargs = ["tests"]\n{ALLOW}')


def go_id(name: str) -> str:
    return f"{GO_MODULE}/{name}"


@pytest.mark.slow
def test_a_go_candidate_answers_for_what_it_broke_and_not_for_what_was_broken(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, GO_FILES)
    calc = GO_FILES["calc/calc.go"]
    write_files(
        p.candidate.root,
        {
            "calc/calc.go": calc.replace("return a + b }\n\n//", "return a - b }\n\n//", 1).replace(
                "return true", "return false"
            ),
            "words/words.go": "package words\n\nfunc Count(s string) int {\n",
        },
    )

    result, base, cand = gate_tests(
        toolchain(GO), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert not result.passed
    assert result.newly_failing == tuple(
        go_id(n)
        for n in (
            "calc/TestAdd",
            "calc/TestTable",
            "calc/TestTable/large_sum",
            "calc/TestTable/small",
            "words/[build failed]",
        )
    )
    assert result.newly_skipped == (go_id("calc/TestSupported"),)
    assert result.not_run == (go_id("words/TestCount"),)
    assert result.recovered_flaky == ()
    # Already failing before the patch: TestMul, the broken package, the exiting package.
    assert base.outcomes[go_id("calc/TestMul")] == cand.outcomes[go_id("calc/TestMul")] == "failed"
    assert any("Add(2, 3) = -1, want 5" in line for line in result.detail)


def test_a_go_test_flaky_on_the_baseline_is_not_charged_to_the_candidate(tmp_path: Path) -> None:
    p = pair(tmp_path, GO_FILES)
    # The candidate's first run is the flaky test's second: it fails, through no fault of a patch.
    write_files(p.candidate.root, {"flaky/runs.count": "x"})

    result, base, cand = gate_tests(
        toolchain(GO), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert base.outcomes[go_id("flaky/TestFlaky")] == "passed"
    assert cand.outcomes[go_id("flaky/TestFlaky")] == "failed"
    assert result.passed, result.detail
    assert result.recovered_flaky == (go_id("flaky/TestFlaky"),)


def test_the_baseline_run_is_cached_per_revision_and_test_settings(tmp_path: Path) -> None:
    p = pair(tmp_path, GO_FILES)
    counter = p.baseline.root / "flaky" / "runs.count"

    first = run_baseline_tests(toolchain(GO), p.baseline, revision=p.revision, cache_dir=tmp_path)
    again = run_baseline_tests(toolchain(GO), p.baseline, revision=p.revision, cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert again.outcomes == first.outcomes
    assert counter.read_text() == "x"  # the cached answer ran nothing

    retried = manifest(GO_MANIFEST, f'runner = "go"\nflaky_retries = 3\n{ALLOW}')
    third = run_baseline_tests(
        toolchain(retried), p.baseline, revision=p.revision, cache_dir=tmp_path
    )
    assert not third.cached and counter.read_text() == "xx"


def test_the_baseline_revision_must_be_the_full_sha_the_worktree_has(tmp_path: Path) -> None:
    p = pair(tmp_path, GO_FILES)
    with pytest.raises(InfrastructureError, match="full sha"):
        run_baseline_tests(toolchain(GO), p.baseline, revision=p.revision[:12], cache_dir=tmp_path)
    with pytest.raises(InfrastructureError, match="is at"):
        run_baseline_tests(toolchain(GO), p.baseline, revision="0" * 40, cache_dir=tmp_path)


def test_a_go_baseline_without_any_test_never_ran_and_raises(tmp_path: Path) -> None:
    files = {"go.mod": GO_FILES["go.mod"], "main.go": "package main\n\nfunc main() {}\n"}
    p = pair(tmp_path, files)
    with pytest.raises(InfrastructureError, match="the baseline's tests never ran"):
        run_baseline_tests(toolchain(GO), p.baseline, revision=p.revision, cache_dir=tmp_path)
    assert not (tmp_path / "baseline-tests").exists() or not any(
        (tmp_path / "baseline-tests").glob("*.json")
    )


def test_a_python_candidate_answers_for_failures_and_skips_it_caused(tmp_path: Path) -> None:
    p = pair(tmp_path, PYTHON_FILES)
    core = PYTHON_FILES["textpkg/core.py"]
    write_files(
        p.candidate.root,
        {
            "textpkg/core.py": core.replace("len(text.split())", "len(text.split(' '))").replace(
                "return True", "return False"
            )
        },
    )

    result, _, _ = gate_tests(
        toolchain(PYTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    # "".split(" ") is [""]: the empty-text case now counts one word.
    assert result.newly_failing == ("tests/test_core.py::TestCounting::test_param[-0]",)
    assert result.newly_skipped == ("tests/test_core.py::test_supported",)
    assert result.not_run == ()
    assert not result.passed


def test_a_python_test_module_that_no_longer_imports_leaves_its_tests_not_run(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, PYTHON_FILES)
    core = PYTHON_FILES["textpkg/core.py"]
    write_files(p.candidate.root, {"textpkg/core.py": core.replace("def shout", "def yell")})

    result, _, _ = gate_tests(
        toolchain(PYTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert result.newly_failing == ("tests/test_core.py",)
    assert result.not_run == (
        "tests/test_core.py::TestCounting::test_param[-0]",
        "tests/test_core.py::TestCounting::test_param[one two-2]",
        "tests/test_core.py::test_counts_words",
        "tests/test_core.py::test_supported",
    )


def test_a_pytest_test_flaky_on_the_baseline_is_not_charged_to_the_candidate(
    tmp_path: Path,
) -> None:
    p = pair(tmp_path, PYTHON_FILES)
    write_files(p.candidate.root, {"tests/runs.count": "x"})

    result, _, cand = gate_tests(
        toolchain(PYTEST), p.baseline, p.candidate, revision=p.revision, cache_dir=tmp_path / "c"
    )

    assert cand.outcomes["tests/test_flaky.py::test_flaky"] == "failed"
    assert result.passed and result.recovered_flaky == ("tests/test_flaky.py::test_flaky",)


def test_a_pytest_baseline_that_never_ran_raises(tmp_path: Path) -> None:
    p = pair(tmp_path, PYTHON_FILES)
    nowhere = manifest(PYTHON_MANIFEST, 'runner = "pytest"\nargs = ["no_such_folder"]')
    with pytest.raises(InfrastructureError, match="the baseline's tests never ran: pytest"):
        run_baseline_tests(toolchain(nowhere), p.baseline, revision=p.revision, cache_dir=tmp_path)
