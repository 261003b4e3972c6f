"""Helpers for the toolchain and test-gate tests: tiny Go and Python targets as real git repos.

Imported by `test_toolchain_*` and `test_tests_gate*` (pytest puts `tests/` on sys.path); it holds
no tests. Builds and test runs are real: real `go`, real pytest, under real bubblewrap.

The Go build cache is speedproof's own shared one (`default_cache_dir()`, or
$SPEEDPROOF_CACHE_DIR): only the Go compiler writes it (test binaries run without it, ADR
0034), and a cold one costs ~25 s on two cores (compiling the standard library and `testing`)
against ~0.2 s warm.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.program import Side
from speedproof.ground.sandbox import Sandbox, make_sandbox
from speedproof.ground.toolchain import TargetToolchain, Tree, default_cache_dir
from speedproof.judge.build.factory import toolchain_for
from speedproof.manifest import Manifest
from speedproof.manifest_loading import parse_manifest
from support.git import commit_all, git

GO_MODULE = "example.com/tiny"


def _text(text: str) -> str:
    return textwrap.dedent(text).lstrip()


GO_FILES = {
    "go.mod": f"module {GO_MODULE}\n\ngo 1.22\n",
    "main.go": _text(
        """
        package main

        import (
        \t"fmt"
        \t"os"

        \t"example.com/tiny/calc"
        )

        func main() {
        \tfmt.Printf("sum=%d args=%d\\n", calc.Add(2, 3), len(os.Args)-1)
        }
        """
    ),
    "calc/calc.go": _text(
        """
        package calc

        func Add(a, b int) int { return a + b }

        // Mul has a bug the baseline already carries: TestMul fails before any patch.
        func Mul(a, b int) int { return a + b }

        func Supported() bool { return true }
        """
    ),
    "calc/calc_test.go": _text(
        """
        package calc

        import "testing"

        func TestAdd(t *testing.T) {
        \tif got := Add(2, 3); got != 5 {
        \t\tt.Fatalf("Add(2, 3) = %d, want 5", got)
        \t}
        }

        func TestMul(t *testing.T) {
        \tif got := Mul(2, 3); got != 6 {
        \t\tt.Fatalf("Mul(2, 3) = %d, want 6", got)
        \t}
        }

        func TestSkipped(t *testing.T) { t.Skip("always skipped") }

        func TestSupported(t *testing.T) {
        \tif !Supported() {
        \t\tt.Skip("not supported here")
        \t}
        }

        func TestTable(t *testing.T) {
        \tfor _, c := range []struct {
        \t\tname    string
        \t\ta, b, w int
        \t}{{"small", 1, 2, 3}, {"large sum", 1000, 2000, 3000}} {
        \t\tt.Run(c.name, func(t *testing.T) {
        \t\t\tif got := Add(c.a, c.b); got != c.w {
        \t\t\t\tt.Errorf("Add(%d, %d) = %d", c.a, c.b, got)
        \t\t\t}
        \t\t})
        \t}
        }
        """
    ),
    "words/words.go": 'package words\n\nimport "strings"\n\n'
    "func Count(s string) int { return len(strings.Fields(s)) }\n",
    "words/words_test.go": _text(
        """
        package words

        import "testing"

        func TestCount(t *testing.T) {
        \tif Count("a b c") != 3 {
        \t\tt.Fatal("want 3")
        \t}
        }
        """
    ),
    # Does not compile, on the baseline already: its tests are one synthetic error.
    "broken/broken.go": 'package broken\n\nfunc Broken() int { return "no" }\n',
    "broken/broken_test.go": 'package broken\n\nimport "testing"\n\n'
    "func TestBroken(t *testing.T) {}\n",
    # Its one test passes and the package still fails: no test to blame.
    "exits/exits_test.go": _text(
        """
        package exits

        import (
        \t"os"
        \t"testing"
        )

        func TestMain(m *testing.M) {
        \tm.Run()
        \tos.Exit(3)
        }

        func TestInside(t *testing.T) {}
        """
    ),
    # Fails on every second run in one checkout, counting runs in a file next to the test.
    "flaky/flaky_test.go": _text(
        """
        package flaky

        import (
        \t"os"
        \t"testing"
        )

        func TestFlaky(t *testing.T) {
        \truns, _ := os.ReadFile("runs.count")
        \truns = append(runs, 'x')
        \tif err := os.WriteFile("runs.count", runs, 0o644); err != nil {
        \t\tt.Fatal(err)
        \t}
        \tif len(runs)%2 == 0 {
        \t\tt.Fatalf("run %d: flaky failure", len(runs))
        \t}
        }
        """
    ),
    ".gitignore": "runs.count\n",
}

PYTHON_FILES = {
    "textpkg/__init__.py": "",
    "textpkg/core.py": _text(
        '''
        def count_words(text):
            return len(text.split())


        def shout(text):
            """A bug the baseline already carries: test_known_bug fails before any patch."""
            return text.upper() + "!"


        def supported():
            return True
        '''
    ),
    "textpkg/__main__.py": _text(
        """
        import os
        import sys

        from textpkg.core import count_words

        print(count_words(" ".join(sys.argv[1:])), os.environ.get("PYTHONHASHSEED"))
        """
    ),
    "bin/count.py": "import sys\n\nprint(len(sys.argv) - 1)\n",
    "tests/test_core.py": _text(
        """
        import pytest

        from textpkg.core import count_words, shout, supported


        def test_counts_words():
            assert count_words("a b c") == 3


        def test_known_bug():
            assert shout("hi") == "HI!!"


        @pytest.mark.skip(reason="always skipped")
        def test_skipped():
            pass


        def test_supported():
            if not supported():
                pytest.skip("not supported here")


        class TestCounting:
            @pytest.mark.parametrize("text,n", [("", 0), ("one two", 2)])
            def test_param(self, text, n):
                assert count_words(text) == n


        @pytest.fixture
        def broken_fixture():
            raise RuntimeError("fixture broke")


        def test_uses_broken_fixture(broken_fixture):
            pass
        """
    ),
    "tests/test_imports_missing.py": "import not_a_module_anywhere\n\n\ndef test_never():\n"
    "    pass\n",
    "tests/test_flaky.py": _text(
        """
        from pathlib import Path


        def test_flaky():
            counter = Path(__file__).with_name("runs.count")
            runs = (counter.read_text() if counter.exists() else "") + "x"
            counter.write_text(runs)
            assert len(runs) % 2 == 1, f"run {len(runs)}: flaky failure"
        """
    ),
    ".gitignore": "runs.count\n",
}


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def make_repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A repository with one commit holding `files`; returns it and the commit's full sha."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    write_files(root, files)
    return root, commit_all(root, "base")


def checkout(repo: Path, revision: str, side: Side, where: Path) -> Tree:
    """A worktree of `repo` at `revision`, with a build folder beside it (not inside)."""
    git(repo, "worktree", "add", "-q", "--detach", str(where), revision)
    return Tree(side=side, worktree=where, root=where, out=where.parent / f"{where.name}-out")


def tree_of(tmp_path: Path, files: dict[str, str], side: Side = "baseline") -> Tree:
    """`files` committed as a fresh repository in tmp_path/repo and checked out at that commit
    as `side` in tmp_path/wt."""
    repo, revision = make_repo(tmp_path / "repo", files)
    return checkout(repo, revision, side, tmp_path / "wt")


def go_tree(tmp_path: Path, files: dict[str, str] | None = None) -> Tree:
    """The Go toy (`GO_FILES` unless other `files`) as a baseline tree."""
    return tree_of(tmp_path, files or GO_FILES)


def manifest(target: str, tests: str, *, extra: str = "") -> Manifest:
    text = f'[target]\n{target}\n\n[tests]\n{tests}\n\n{extra}\n[[workloads]]\nid = "w"\n'
    return parse_manifest(textwrap.dedent(text))


GO_MANIFEST = 'name = "tiny"\nlanguage = "go"'
PYTHON_MANIFEST = 'name = "textpkg"\nlanguage = "python"\nmodule = "textpkg"'
# `[tests]` tables: the toys' own suites, run by go test and by pytest.
GO_TESTS = 'runner = "go"'
PYTEST_TESTS = 'runner = "pytest"\nargs = ["tests"]'


def caches() -> Path:
    """Speedproof's real cache folder: the shared Go build cache is what keeps the suite fast."""
    folder = default_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_SANDBOX: list[Sandbox] = []


def sandbox() -> Sandbox:
    """The real bubblewrap sandbox, probed once."""
    if not _SANDBOX:
        _SANDBOX.append(make_sandbox())
    return _SANDBOX[0]


def toolchain(m: Manifest) -> TargetToolchain:
    return toolchain_for(m, sandbox(), caches=caches())


@dataclass(frozen=True)
class Pair:
    """A target at one revision, checked out twice: the baseline and a candidate to edit."""

    repo: Path
    revision: str
    baseline: Tree
    candidate: Tree


def pair(tmp_path: Path, files: dict[str, str]) -> Pair:
    repo, revision = make_repo(tmp_path / "repo", files)
    return Pair(
        repo=repo,
        revision=revision,
        baseline=checkout(repo, revision, "baseline", tmp_path / "baseline"),
        candidate=checkout(repo, revision, "candidate", tmp_path / "candidate"),
    )
