"""The attack suite: patches that try to change what judges them, and the guard refusing them.

First-pass tests read only the patch text. Where a trick depends on how a tool reads headers,
the test also runs that tool on a real repository to show the trick is real, so the guard's
refusal is what stands between the patch and the protected file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.ground.errors import PatchError
from speedproof.judge.guard.check import GuardResult, Violation, check_applied, check_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import Worktree, worktree
from support.git import git
from support.workspace import (
    GO_FILES,
    PYTHON_FILES,
    make_repo,
    run_git_apply_check,
    run_gnu_patch,
)

GO = ProtectedPaths.build("go")
PYTHON = ProtectedPaths.build("python")

GO_MOD_HUNK = "@@ -1,3 +1,3 @@\n-module example.com/m\n+module evil.example/m\n \n go 1.22\n"
EVIL_MODULE = "module evil.example/m\n\ngo 1.22\n"
FASTER_MAIN = (
    "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -3,5 +3,5 @@\n"
    ' import "fmt"\n \n func main() {\n-\tfmt.Println("hi")\n+\tfmt.Print("hi\\n")\n }\n'
)


def edit(path: str, old: str, new: str) -> str:
    """A git-style one-line edit of `path`."""
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n"
        f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


def refused(patch: str, protected: ProtectedPaths = GO) -> GuardResult:
    result = check_patch(patch, protected)
    assert not result.passed, "the first pass let the patch through"
    assert result.violations
    return result


def with_rule(result: GuardResult, rule: str) -> list[Violation]:
    found = [v for v in result.violations if v.rule == rule]
    assert found, f"no {rule!r} violation in {result.summary()}"
    return found


@pytest.fixture
def go_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "go", GO_FILES)


@pytest.fixture
def go_tree(go_repo: Path) -> Iterator[Worktree]:
    with worktree(go_repo, "HEAD") as wt:
        yield wt


# --- first pass: protected files, named plainly ---------------------------------------------


def test_an_edit_of_a_go_test_file_is_refused() -> None:
    result = refused(edit("main_test.go", "package main", "package main_test"))
    assert {v.path for v in with_rule(result, "protected-path")} == {"main_test.go"}
    assert result.rules == {"protected-path"}


def test_an_edit_of_testdata_is_refused() -> None:
    result = refused(edit("testdata/x.txt", "hello", "pwned"))
    assert "Go test data" in with_rule(result, "protected-path")[0].detail


def test_an_edit_of_go_mod_is_refused() -> None:
    result = refused(edit("go.mod", "module example.com/m", "module evil.example/m"))
    assert with_rule(result, "protected-path")[0].path == "go.mod"


# --- first pass: header tricks ---------------------------------------------------------------


def test_a_patch_whose_old_name_is_go_mod_and_new_name_innocent_is_refused(
    go_tree: Worktree,
) -> None:
    trick = "--- a/go.mod\n+++ b/other.go\n" + GO_MOD_HUNK
    result = refused(trick)
    violation = with_rule(result, "protected-path")[0]
    assert violation.path == "go.mod" and "`---` header" in violation.detail
    # Why it matters: GNU patch -p1 picks the name of the file that exists, and edits go.mod.
    assert run_gnu_patch(go_tree.path, trick).returncode == 0
    assert (go_tree.path / "go.mod").read_text() == EVIL_MODULE
    assert not (go_tree.path / "other.go").exists()


def test_a_patch_that_renames_into_a_test_file_is_refused() -> None:
    patch = (
        "diff --git a/main.go b/main.go\nsimilarity index 100%\n"
        "rename from main.go\nrename to main_test.go\n"
    )
    result = refused(patch)
    assert any(
        v.path == "main_test.go" and "`rename to`" in v.detail
        for v in with_rule(result, "protected-path")
    )


def test_a_patch_that_copies_onto_a_protected_path_is_refused() -> None:
    patch = (
        "diff --git a/main.go b/main.go\nsimilarity index 100%\n"
        "copy from main.go\ncopy to testdata/x.txt\n"
    )
    result = refused(patch)
    assert any("`copy to`" in v.detail for v in with_rule(result, "protected-path"))


def test_an_index_line_naming_go_mod_is_refused(go_tree: Worktree) -> None:
    patch = "Index: a/go.mod\n" + GO_MOD_HUNK
    result = refused(patch)
    assert "`Index:` header" in with_rule(result, "protected-path")[0].detail
    # GNU patch takes the name from `Index:` when nothing else names a file.
    assert run_gnu_patch(go_tree.path, patch).returncode == 0
    assert (go_tree.path / "go.mod").read_text() == EVIL_MODULE


def test_a_context_diff_naming_go_mod_with_stars_is_refused(go_tree: Worktree) -> None:
    patch = (
        "*** a/go.mod\t2024-01-01 00:00:00.000000000 +0000\n"
        "--- b/other.go\t2024-01-01 00:00:00.000000000 +0000\n"
        "***************\n*** 1,3 ****\n! module example.com/m\n  \n  go 1.22\n"
        "--- 1,3 ----\n! module evil.example/m\n  \n  go 1.22\n"
    )
    result = refused(patch)
    assert "`***` header" in with_rule(result, "protected-path")[0].detail
    assert run_gnu_patch(go_tree.path, patch).returncode == 0
    assert (go_tree.path / "go.mod").read_text() == EVIL_MODULE


def test_a_quoted_name_with_octal_escapes_is_decoded_and_refused(go_tree: Worktree) -> None:
    # `\141` is "a": the text never spells "testdata", both tools read it as testdata/x.txt.
    name = '"%s/testdat\\141/x.txt"'
    patch = (
        f"diff --git {name % 'a'} {name % 'b'}\n--- {name % 'a'}\n+++ {name % 'b'}\n"
        "@@ -1 +1 @@\n-hello\n+pwned\n"
    )
    assert "testdata" not in patch
    result = refused(patch)
    assert "testdata/x.txt" in {v.path for v in with_rule(result, "protected-path")}
    assert run_git_apply_check(go_tree.path, patch).returncode == 0
    assert run_gnu_patch(go_tree.path, patch).returncode == 0
    assert (go_tree.path / "testdata" / "x.txt").read_text() == "pwned\n"


def test_a_quoted_name_followed_by_a_timestamp_is_refused() -> None:
    patch = '--- "a/go.mod"\t2024-01-01 00:00:00\n+++ "b/go.mod"\t2024-01-01 00:00:00\n'
    refused(patch + GO_MOD_HUNK)


def test_a_header_indented_for_gnu_patch_is_refused(go_tree: Worktree) -> None:
    plain = "--- a/main.go\n+++ b/main.go\n" + "--- a/go.mod\n+++ b/go.mod\n" + GO_MOD_HUNK
    indented = "".join("  " + line + "\n" for line in plain.splitlines()[2:])
    result = refused(indented)
    assert with_rule(result, "protected-path")[0].path == "go.mod"
    # GNU patch accepts a patch indented as a whole ("Patch is indented 2 spaces").
    assert run_gnu_patch(go_tree.path, indented).returncode == 0
    assert (go_tree.path / "go.mod").read_text() == EVIL_MODULE


def test_a_header_with_a_crlf_ending_is_refused() -> None:
    refused("--- a/go.mod\r\n+++ b/go.mod\r\n" + GO_MOD_HUNK.replace("\n", "\r\n"))


# --- first pass: paths out of the repository -----------------------------------------------


def test_a_dot_dot_escape_is_refused() -> None:
    result = refused("--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-a\n+b\n")
    assert with_rule(result, "path-escape")[0].path in {"../outside.txt", "a/../outside.txt"}


def test_an_absolute_path_is_refused() -> None:
    result = refused("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-root\n+toor\n")
    assert with_rule(result, "absolute-path")[0].path == "/etc/passwd"


def test_dev_null_is_not_taken_for_an_absolute_path() -> None:
    patch = (
        "diff --git a/pkg/new.go b/pkg/new.go\nnew file mode 100644\n"
        "index 0000000..1111111\n--- /dev/null\n+++ b/pkg/new.go\n@@ -0,0 +1 @@\n+package pkg\n"
    )
    assert check_patch(patch, GO).passed
    deletion = patch.replace("new file", "deleted file").replace("--- /dev/null", "--- a/x")
    assert check_patch(deletion.replace("+++ b/pkg/new.go", "+++ /dev/null"), GO).passed


# --- first pass: what is not a text edit of a regular file ---------------------------------


def test_dev_null_with_a_gnu_diff_timestamp_is_not_a_path() -> None:
    patch = (
        "--- /dev/null\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ b/pkg/new.go\t2024-01-01 00:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+package pkg\n"
    )
    assert check_patch(patch, GO).passed
    assert not check_patch(patch.replace("/dev/null", "/dev/null/../etc/x"), GO).passed


def test_a_git_binary_patch_is_refused() -> None:
    patch = (
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 4\nLcmZQzU|?ci00001\n\nliteral 0\nHcmV?d00001\n"
    )
    result = refused(patch)
    assert result.rules == {"binary"}
    assert with_rule(result, "binary")[0].path == "logo.png"


def test_a_binary_files_differ_line_is_refused() -> None:
    patch = "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"
    assert refused(patch).rules == {"binary"}


def test_a_mode_change_is_refused() -> None:
    patch = "diff --git a/main.go b/main.go\nold mode 100644\nnew mode 100755\n"
    result = refused(patch)
    assert result.rules == {"mode-change"}
    assert {v.path for v in result.violations} == {"main.go"}


def test_a_new_symlink_is_refused() -> None:
    patch = (
        "diff --git a/shortcut b/shortcut\nnew file mode 120000\nindex 0000000..1111111\n"
        "--- /dev/null\n+++ b/shortcut\n@@ -0,0 +1 @@\n+testdata\n\\ No newline at end of file\n"
    )
    assert with_rule(refused(patch), "symlink")[0].path == "shortcut"


def test_an_edit_of_an_existing_symlink_is_refused() -> None:
    patch = (
        "diff --git a/link b/link\nindex 1111111..2222222 120000\n--- a/link\n+++ b/link\n"
        "@@ -1 +1 @@\n-src\n\\ No newline at end of file\n+/etc\n\\ No newline at end of file\n"
    )
    with_rule(refused(patch), "symlink")


def test_a_new_submodule_is_refused() -> None:
    patch = (
        "diff --git a/vendored b/vendored\nnew file mode 160000\nindex 0000000..1111111\n"
        "--- /dev/null\n+++ b/vendored\n@@ -0,0 +1 @@\n"
        "+Subproject commit 1111111111111111111111111111111111111111\n"
    )
    assert refused(patch).rules == {"submodule"}


def test_an_unusual_file_mode_is_refused() -> None:
    patch = "diff --git a/x b/x\nnew file mode 100777\nindex 0000000..1111111\n"
    assert refused(patch).rules == {"unusual-mode"}


def test_an_ed_script_is_refused() -> None:
    result = refused("1c\nmodule evil.example/m\n.\nw\n")
    assert {"ed-script", "no-headers"} <= result.rules


def test_an_empty_patch_is_refused() -> None:
    for text in ("", "\n", "  \n\t\n"):
        assert refused(text).rules == {"empty"}


def test_garbage_text_is_refused_for_having_no_headers() -> None:
    result = refused("Here is a faster version of main.go:\n\nfunc main() {}\n")
    assert result.rules == {"no-headers"}
    assert result.violations[0].path is None


def test_an_absurdly_long_header_is_refused_without_being_parsed() -> None:
    result = refused("--- a/" + "x " * 5000 + "\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    assert "malformed-header" in result.rules


# --- first pass: Python layout ---------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_mod.py",
        "tests/data/input.txt",
        "conftest.py",
        "pyproject.toml",
        "pkg/mod_test.py",
    ],
)
def test_python_tests_data_and_configuration_are_refused(path: str) -> None:
    result = refused(edit(path, "a", "b"), PYTHON)
    assert path in {v.path for v in with_rule(result, "protected-path")}


# --- first pass: ordinary patches go through -----------------------------------------------


def test_an_ordinary_source_edit_passes_the_first_pass() -> None:
    result = check_patch(edit("main.go", "package main", "package main // faster"), GO)
    assert result.passed and result.violations == ()
    assert check_patch(edit("pkg/mod.py", "def double(x):", "def double(x: int):"), PYTHON).passed


def test_unified_headers_with_timestamps_and_a_new_file_pass() -> None:
    patch = (
        "--- a/main.go\t2024-01-01 00:00:00.000000000 +0000\n"
        "+++ b/main.go\t2024-01-02 00:00:00.000000000 +0000\n"
        "@@ -1 +1 @@\n-package main\n+package main\n"
    )
    assert check_patch(patch, GO).passed


def test_a_quoted_non_ascii_name_that_is_not_protected_passes() -> None:
    patch = (
        'diff --git "a/f\\303\\266o.go" "b/f\\303\\266o.go"\n--- "a/f\\303\\266o.go"\n'
        '+++ "b/f\\303\\266o.go"\n@@ -1 +1 @@\n-a\n+b\n'
    )
    assert check_patch(patch, GO).passed


def test_a_refusal_becomes_a_patch_error_that_names_the_rule() -> None:
    with pytest.raises(PatchError, match=r"protected-path: 'go\.mod' is protected"):
        refused(edit("go.mod", "a", "b")).raise_if_failed()


# --- second pass: what really changed ---------------------------------------------------------


LINK_EDIT = "--- a/link/x.txt\n+++ b/link/x.txt\n@@ -1 +1 @@\n-hello\n+pwned\n"


@pytest.fixture
def linked_tree(tmp_path: Path) -> Iterator[Worktree]:
    repo = make_repo(tmp_path / "linked", GO_FILES, symlinks={"link": "testdata"})
    with worktree(repo, "HEAD") as wt:
        yield wt


def test_gnu_patch_following_a_tracked_symlink_into_testdata_is_caught_after_applying(
    linked_tree: Worktree,
) -> None:
    tree = linked_tree.path
    assert check_patch(LINK_EDIT, GO).passed, "the text names only link/x.txt"
    refusal = run_git_apply_check(tree, LINK_EDIT)
    assert refusal.returncode != 0 and "beyond a symbolic link" in refusal.stderr
    assert run_gnu_patch(tree, LINK_EDIT).returncode == 0
    assert (tree / "testdata" / "x.txt").read_text() == "pwned\n"
    result = check_applied(tree, linked_tree.rev, GO)
    assert not result.passed
    assert with_rule(result, "protected-path")[0].path == "testdata/x.txt"


def test_apply_patch_does_not_let_gnu_patch_write_through_a_symlink(linked_tree: Worktree) -> None:
    with pytest.raises(PatchError, match="through the symbolic link 'link'"):
        apply_patch(linked_tree.path, LINK_EDIT)
    assert (linked_tree.path / "testdata" / "x.txt").read_text() == "hello\n"
    assert check_applied(linked_tree.path, linked_tree.rev, GO).passed


def test_a_symlink_that_appears_in_the_worktree_is_refused(go_tree: Worktree) -> None:
    (go_tree.path / "shortcut").symlink_to("testdata")
    (go_tree.path / "passwd").symlink_to("/etc/passwd")
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert {v.path for v in with_rule(result, "symlink")} == {"shortcut", "passwd"}


def test_an_ignored_file_written_by_a_patch_is_refused(go_tree: Worktree) -> None:
    patch = (
        "diff --git a/build/cache.txt b/build/cache.txt\nnew file mode 100644\n"
        "index 0000000..1111111\n--- /dev/null\n+++ b/build/cache.txt\n@@ -0,0 +1 @@\n+cached\n"
    )
    assert check_patch(patch, GO).passed
    assert apply_patch(go_tree.path, patch).method == "git"
    assert (go_tree.path / "build" / "cache.txt").is_file()
    assert git(go_tree.path, "status", "--porcelain") == "", "plain status hides it"
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert result.rules == {"ignored-file"}
    assert result.violations[0].path == "build/cache.txt"


def test_an_ignored_file_inside_a_protected_folder_is_refused_twice(go_tree: Worktree) -> None:
    (go_tree.path / "testdata" / "scratch.tmp").write_text("x")
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert result.rules == {"ignored-file", "protected-path"}


def test_a_deleted_or_added_test_file_is_refused(go_tree: Worktree) -> None:
    (go_tree.path / "main_test.go").unlink()
    (go_tree.path / "extra_test.go").write_text("package main\n")
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert {v.path for v in with_rule(result, "protected-path")} == {
        "main_test.go",
        "extra_test.go",
    }


def test_a_mode_change_on_disk_is_refused(go_tree: Worktree) -> None:
    (go_tree.path / "main.go").chmod(0o755)
    assert check_applied(go_tree.path, go_tree.rev, GO).rules == {"mode-change"}


def test_a_nested_repository_is_refused(go_tree: Worktree) -> None:
    (go_tree.path / "inner").mkdir()
    git(go_tree.path / "inner", "init", "-q")
    (go_tree.path / "inner" / "f.go").write_text("package inner\n")
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert with_rule(result, "submodule")[0].path == "inner/"


def test_a_moved_head_is_refused(go_tree: Worktree) -> None:
    git(go_tree.path, "commit", "-q", "--allow-empty", "-m", "sneaky")
    assert "head-moved" in check_applied(go_tree.path, go_tree.rev, GO).rules


def test_an_ordinary_edit_passes_both_passes_and_applies_with_git(go_tree: Worktree) -> None:
    patch = FASTER_MAIN
    assert check_applied(go_tree.path, go_tree.rev, GO).passed, "a fresh worktree is clean"
    assert check_patch(patch, GO).passed
    assert apply_patch(go_tree.path, patch).method == "git"
    result = check_applied(go_tree.path, go_tree.rev, GO)
    assert result.passed, result.summary()


def test_a_rename_of_python_source_passes_both_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "py", PYTHON_FILES)
    patch = (
        "diff --git a/pkg/mod.py b/pkg/fast.py\nsimilarity index 100%\n"
        "rename from pkg/mod.py\nrename to pkg/fast.py\n"
    )
    assert check_patch(patch, PYTHON).passed
    with worktree(repo, "HEAD") as wt:
        assert apply_patch(wt.path, patch).method == "git"
        assert (wt.path / "pkg" / "fast.py").is_file()
        assert check_applied(wt.path, wt.rev, PYTHON).passed
