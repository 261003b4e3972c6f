from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.ground.errors import PatchError
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import Worktree, worktree
from support.workspace import GO_FILES, make_repo

HUNK_BODY = ' \n func main() {\n-\tfmt.Println("hi")\n+\tfmt.Print("hi\\n")\n }\n'
FASTER = (
    "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n"
    '@@ -3,5 +3,5 @@\n import "fmt"\n' + HUNK_BODY
)
# The first context line is stale (the model remembered `import "os"`): git needs every
# context line to match, GNU patch with fuzz drops the outermost ones.
STALE_CONTEXT = FASTER.replace(' import "fmt"', ' import "os"')
FASTER_MAIN_GO = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Print("hi\\n")\n}\n'


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Worktree]:
    with worktree(make_repo(tmp_path / "go", GO_FILES), "HEAD") as wt:
        yield wt


def test_an_ordinary_patch_is_applied_with_git(tree: Worktree) -> None:
    result = apply_patch(tree.path, FASTER)
    assert result.method == "git"
    assert (tree.path / "main.go").read_text() == FASTER_MAIN_GO
    check, applied = result.commands
    assert check.argv[-4:] == ("apply", "--whitespace=nowarn", "--check", "-") and check.ok
    assert applied.argv[-4:] == ("apply", "--whitespace=nowarn", "--verbose", "-") and applied.ok
    assert not any("--unsafe-paths" in run.argv for run in result.commands)


def test_stale_context_that_git_refuses_is_applied_by_gnu_patch_with_fuzz(tree: Worktree) -> None:
    result = apply_patch(tree.path, STALE_CONTEXT)
    assert result.method == "patch"
    assert (tree.path / "main.go").read_text() == FASTER_MAIN_GO
    git_check = result.commands[0]
    assert not git_check.ok and "patch does not apply" in git_check.stderr
    dry_run, applied = result.commands[-2:]
    assert "--dry-run" in dry_run.argv and "--dry-run" not in applied.argv
    assert applied.argv[:6] == (
        "patch",
        "-p1",
        "--fuzz=2",
        "--batch",
        "--forward",
        "--no-backup-if-mismatch",
    )
    assert "fuzz" in result.stdout
    assert not list(tree.path.glob("*.orig")) and not list(tree.path.glob("*.rej"))


def test_a_patch_both_tools_refuse_is_a_patch_error_naming_both(tree: Worktree) -> None:
    hopeless = FASTER.replace("Println", "Printf")
    with pytest.raises(PatchError, match=r"git refused the patch .* and so did GNU patch"):
        apply_patch(tree.path, hopeless)
    assert (tree.path / "main.go").read_text() == GO_FILES["main.go"]


def test_an_already_applied_patch_is_refused_rather_than_reversed(tree: Worktree) -> None:
    apply_patch(tree.path, FASTER)
    with pytest.raises(PatchError, match="GNU patch"):
        apply_patch(tree.path, FASTER)
    assert (tree.path / "main.go").read_text() == FASTER_MAIN_GO


def test_neither_tool_writes_outside_the_worktree(tree: Worktree) -> None:
    escape = "--- /dev/null\n+++ b/../escaped.txt\n@@ -0,0 +1 @@\n+out\n"
    with pytest.raises(PatchError):
        apply_patch(tree.path, escape)
    assert not (tree.path.parent / "escaped.txt").exists()


def test_garbage_is_a_patch_error(tree: Worktree) -> None:
    with pytest.raises(PatchError):
        apply_patch(tree.path, "make it faster please\n")


def test_normalise_turns_crlf_into_lf() -> None:
    assert normalise_patch("--- a/x\r\n+++ b/x\r\n") == "--- a/x\n+++ b/x\n"


def test_normalise_adds_a_missing_final_newline_and_leaves_empty_text_empty() -> None:
    assert normalise_patch("--- a/x\n+++ b/x") == "--- a/x\n+++ b/x\n"
    assert normalise_patch("") == ""


def test_normalise_strips_a_markdown_code_fence() -> None:
    fenced = "\n```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n"
    assert normalise_patch(fenced) == "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert normalise_patch("```\n--- a/x\n+++ b/x\n") == "--- a/x\n+++ b/x\n"


def test_normalise_changes_nothing_else() -> None:
    text = " leading context\n-\tremoved\n+  added  \n\n```not a fence at the start```\n"
    assert normalise_patch(text) == text


def test_a_fenced_crlf_patch_applies_once_normalised(tree: Worktree) -> None:
    fenced = ("```diff\n" + FASTER + "```\n").replace("\n", "\r\n")
    assert apply_patch(tree.path, normalise_patch(fenced)).method == "git"
    assert (tree.path / "main.go").read_text() == FASTER_MAIN_GO
