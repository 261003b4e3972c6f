"""A Go candidate that forges its own test report is caught by speedproof's canary test.

A Go test binary links the package under test, so the package's own `init()` runs before any
test and can write whatever report it likes: here, `--- PASS` for every test of the package in
test2json's framing, then `os.Exit(0)` before a single test runs. The report alone believes it
(every test reads `passed`, `TestMul`'s real failure included); the canary, a test speedproof
adds under a fresh name and removes before the binaries run, is missing from it and the binary
exited 0, so the run is marked as tampered with. Real `go`, real bubblewrap, a real module.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.tests.go_canary import CANARY_FILE
from support.toolchain import (
    GO_FILES,
    GO_MANIFEST,
    GO_MODULE,
    GO_TESTS,
    go_tree,
    manifest,
    toolchain,
)

# `\x16` is the framing byte `-test.v=test2json` puts before each of testing's own lines.
FORGER = """package calc

import (
\t"fmt"
\t"os"
\t"strings"
)

func init() {
\tif !strings.HasSuffix(os.Args[0], ".test") {
\t\treturn
\t}
\tfor _, name := range []string{"TestAdd", "TestMul", "TestSkipped", "TestSupported", "TestTable"} {
\t\tfmt.Printf("\\x16=== RUN   %s\\n\\x16--- PASS: %s (0.00s)\\n", name, name)
\t}
\tfmt.Print("\\x16PASS\\n")
\tos.Exit(0)
}
"""


def test_a_package_init_that_prints_passes_and_exits_zero_is_caught_as_tampering(
    tmp_path: Path,
) -> None:
    tree = go_tree(tmp_path, {**GO_FILES, "calc/forge.go": FORGER})

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    # The forgery works on the report: the failing TestMul reads as passed.
    assert run.outcomes[f"{GO_MODULE}/calc/TestMul"] == "passed"
    assert run.outcomes[f"{GO_MODULE}/words/TestCount"] == "passed"
    calc = [t for t in run.tampered if t.startswith(f"{GO_MODULE}/calc:")]
    assert any("exited 0" in t for t in calc), run.tampered
    assert any("canary test is missing" in t for t in calc), run.tampered
    # Only the forging package is named; honest packages ran their canary.
    assert all(t.startswith(f"{GO_MODULE}/calc:") for t in run.tampered)
    assert not run.checked


def test_an_honest_run_reports_no_canary_and_says_what_was_checked(tmp_path: Path) -> None:
    tree = go_tree(tmp_path)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    assert run.tampered == ()
    assert not any("Canary" in test_id for test_id in run.outcomes)
    assert run.outcomes[f"{GO_MODULE}/calc/TestMul"] == "failed"
    assert "canary test to its failure" in run.checked
    # Nothing of the canary is left in the tree for a later run to read.
    assert not list(tree.worktree.rglob(CANARY_FILE))


def test_a_re_run_of_chosen_tests_carries_the_canary_too(tmp_path: Path) -> None:
    tree = go_tree(tmp_path)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(
        tree, only=[f"{GO_MODULE}/calc/TestAdd", f"{GO_MODULE}/calc/TestTable/small"]
    )

    assert run.outcomes == {
        f"{GO_MODULE}/calc/TestAdd": "passed",
        f"{GO_MODULE}/calc/TestTable": "passed",
        f"{GO_MODULE}/calc/TestTable/small": "passed",
    }
    assert run.tampered == ()
    # Two binaries ran, the top-level selection and the subtest's, each with its canary.
    assert "each of 2 test binaries ran speedproof's canary test" in run.checked


def test_a_forger_on_a_re_run_is_caught_by_the_canary(tmp_path: Path) -> None:
    tree = go_tree(tmp_path, {**GO_FILES, "calc/forge.go": FORGER})

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(
        tree, only=[f"{GO_MODULE}/calc/TestMul"]
    )

    assert run.outcomes[f"{GO_MODULE}/calc/TestMul"] == "passed"
    assert any("canary test is missing" in t for t in run.tampered), run.tampered
