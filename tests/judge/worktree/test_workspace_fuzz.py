"""How far a hunk may drift: GNU patch's fuzz, the offsets both tools report, and the function
a hunk names in its header against the function its lines landed in.

Every patch here goes through `apply_patch` on a real worktree, so git and GNU patch decide
where each hunk lands; the tests only read what they did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.ground.errors import PatchError
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import Worktree, worktree
from support.workspace import make_repo

# Two functions whose loops are the same but for `int(p, 10)`: a hunk written for parse_line
# from a stale memory of it (`int(p)`) matches format_row once fuzz drops its outer lines.
ROWS_PY = """\
import os


def parse_line(text):
    parts = text.split(",")
    total = 0
    for p in parts:
        total += int(p, 10)
    return total


def format_row(row):
    parts = row.split(",")
    total = 0
    for p in parts:
        total += int(p)
    return total
"""
# Meant for parse_line (line 5) but stale there; GNU patch finds the rest of it at line 13.
STALE_FOR_PARSE_LINE = (
    """\
--- a/rows.py
+++ b/rows.py
@@ -5,6 +5,7 @@ def parse_line(text):
     parts = text.split(",")
     total = 0
     for p in parts:
+        p = p.strip()
         total += int(p)
     return total
"""
    + " \n"
)  # a blank context line
# Exact context for parse_line, written three lines too low: git finds it at line 5.
LOW_FOR_PARSE_LINE = (
    """\
--- a/rows.py
+++ b/rows.py
@@ -8,6 +8,7 @@ def parse_line(text):
     parts = text.split(",")
     total = 0
     for p in parts:
+        p = p.strip()
         total += int(p, 10)
     return total
"""
    + " \n"
)
# The same, with a stale first context line git refuses and GNU patch forgives with fuzz 1.
STALE_AND_LOW = LOW_FOR_PARSE_LINE.replace('text.split(",")', 'text.split(";")')
# Context only format_row holds, exactly, under a header naming parse_line: git lands it
# five lines down, in format_row.
EXACT_FOR_FORMAT_ROW = """\
--- a/rows.py
+++ b/rows.py
@@ -8,5 +8,6 @@ def parse_line(text):
     parts = row.split(",")
     total = 0
     for p in parts:
+        p = p.strip()
         total += int(p)
     return total
"""
CLEAN = LOW_FOR_PARSE_LINE.replace("@@ -8,6 +8,7 @@", "@@ -5,6 +5,7 @@")
# Three stale lines of context on each side: only `--fuzz=3` or more ignores them all.
THREE_STALE = (
    "--- a/rows.py\n+++ b/rows.py\n@@ -1,7 +1,7 @@\n import sys\n import re\n \n"
    "-def parse_line(text):\n+def parse_line(text: str) -> int:\n"
    "     body = 1\n     more = 2\n     last = 3\n"
)

GO_ROWS = """\
package rows

import "strconv"

func parseLine(parts []string) int {
\ttotal := 0
\tfor _, p := range parts {
\t\tn, _ := strconv.Atoi(p)
\t\ttotal += n * 1
\t}
\treturn total
}

type Rows struct{ parts []string }

func (r *Rows) formatRow() int {
\ttotal := 0
\tfor _, p := range r.parts {
\t\tn, _ := strconv.Atoi(p)
\t\ttotal += n
\t}
\treturn total
}
"""
# Meant for parseLine but stale everywhere; fuzz 1 drops `sum := 0` and `}`, and the rest
# matches formatRow eleven lines further down.
GO_STALE = """\
--- a/rows.go
+++ b/rows.go
@@ -6,5 +6,6 @@ func parseLine(parts []string) int {
 \tsum := 0
 \tfor _, p := range r.parts {
 \t\tn, _ := strconv.Atoi(p)
+\t\tn++
 \t\ttotal += n
 \t}
"""


@pytest.fixture
def py_tree(tmp_path: Path) -> Iterator[Worktree]:
    with worktree(make_repo(tmp_path / "py", {"rows.py": ROWS_PY}), "HEAD") as wt:
        yield wt


@pytest.fixture
def go_tree(tmp_path: Path) -> Iterator[Worktree]:
    with worktree(make_repo(tmp_path / "go", {"rows.go": GO_ROWS}), "HEAD") as wt:
        yield wt


def lines_of(tree: Worktree, name: str) -> list[str]:
    return (tree.path / name).read_text().splitlines()


def test_gnu_patch_forgives_no_more_than_two_stale_context_lines(py_tree: Worktree) -> None:
    with pytest.raises(PatchError, match="so did GNU patch"):
        apply_patch(py_tree.path, THREE_STALE)
    assert (py_tree.path / "rows.py").read_text() == ROWS_PY


def test_a_clean_patch_records_no_fuzz_and_no_offset(py_tree: Worktree) -> None:
    result = apply_patch(py_tree.path, CLEAN)
    assert result.method == "git"
    assert result.fuzz_notes == ()
    assert lines_of(py_tree, "rows.py")[7] == "        p = p.strip()"


def test_an_offset_git_applied_is_recorded(py_tree: Worktree) -> None:
    result = apply_patch(py_tree.path, LOW_FOR_PARSE_LINE)
    assert result.method == "git"
    assert result.fuzz_notes == ("rows.py hunk 1: offset -3 lines",)
    assert lines_of(py_tree, "rows.py")[7] == "        p = p.strip()"


def test_fuzz_and_an_offset_gnu_patch_applied_are_recorded(py_tree: Worktree) -> None:
    result = apply_patch(py_tree.path, STALE_AND_LOW)
    assert result.method == "patch"
    assert result.fuzz_notes == ("rows.py hunk 1: fuzz 1, offset -3 lines",)
    assert lines_of(py_tree, "rows.py")[7] == "        p = p.strip()"


def test_a_hunk_fuzz_would_carry_into_another_python_function_is_refused(
    py_tree: Worktree,
) -> None:
    with pytest.raises(PatchError) as refused:
        apply_patch(py_tree.path, STALE_FOR_PARSE_LINE)
    assert "rows.py: hunk 1 names parse_line but its lines landed in format_row (line 16)" in str(
        refused.value
    )
    assert "fuzz 1, offset 8 lines" in str(refused.value)


def test_a_hunk_an_offset_carries_into_another_function_is_refused_even_from_git(
    py_tree: Worktree,
) -> None:
    # Exact context that only format_row holds, under a header naming parse_line.
    patch = EXACT_FOR_FORMAT_ROW
    with pytest.raises(
        PatchError, match="hunk 1 names parse_line but its lines landed in format_row"
    ):
        apply_patch(py_tree.path, patch)


def test_a_hunk_fuzz_would_carry_into_another_go_function_is_refused(go_tree: Worktree) -> None:
    with pytest.raises(PatchError) as refused:
        apply_patch(go_tree.path, GO_STALE)
    assert "rows.go: hunk 1 names parseLine but its lines landed in formatRow (line 20)" in str(
        refused.value
    )


def test_a_go_method_named_with_its_receiver_is_matched_by_its_identifier(
    go_tree: Worktree,
) -> None:
    patch = GO_STALE.replace(
        "func parseLine(parts []string) int {", "func (r *Rows) formatRow() int {"
    )
    result = apply_patch(go_tree.path, patch)
    assert result.fuzz_notes == ("rows.go hunk 1: fuzz 1, offset 11 lines",)
    assert lines_of(go_tree, "rows.go")[19] == "\t\tn++"


def test_a_header_naming_the_definition_before_the_hunk_is_accepted(py_tree: Worktree) -> None:
    # What `git diff` writes when the context starts on the `def` line: the nearest line above
    # the hunk that begins with a letter, here parse_line's `def` for a hunk in format_row.
    patch = (
        "--- a/rows.py\n+++ b/rows.py\n@@ -15,4 +15,5 @@ def parse_line(text):\n"
        ' def format_row(row):\n     parts = row.split(",")\n+    parts.reverse()\n'
        "     total = 0\n     for p in parts:\n"
    )
    result = apply_patch(py_tree.path, patch)
    assert result.fuzz_notes == ("rows.py hunk 1: offset -3 lines",)
    assert lines_of(py_tree, "rows.py")[13] == "    parts.reverse()"


def test_a_header_naming_the_enclosing_class_is_accepted(tmp_path: Path) -> None:
    source = "class Rows:\n    def total(self):\n        x = 1\n        y = 2\n        return x\n"
    patch = (
        "--- a/m.py\n+++ b/m.py\n@@ -6,3 +6,4 @@ class Rows:\n"
        "         x = 1\n         y = 2\n+        y += 1\n         return x\n"
    )
    with worktree(make_repo(tmp_path / "r", {"m.py": source}), "HEAD") as wt:
        assert apply_patch(wt.path, patch).fuzz_notes == ("m.py hunk 1: offset -3 lines",)


def test_a_header_that_names_no_definition_is_not_checked(py_tree: Worktree) -> None:
    patch = EXACT_FOR_FORMAT_ROW.replace("def parse_line(text):", "import os")
    result = apply_patch(py_tree.path, patch)
    assert result.fuzz_notes == ("rows.py hunk 1: offset 5 lines",)
    assert lines_of(py_tree, "rows.py")[15] == "        p = p.strip()"


def test_moves_are_recorded_per_file_and_per_hunk_as_the_tools_number_them(
    tmp_path: Path,
) -> None:
    # rows.py's two hunks are both written three lines too low.
    notes = "one\ntwo\nthree\n"
    second = (
        "@@ -16,5 +17,6 @@ def format_row(row):\n"
        '     parts = row.split(",")\n     total = 0\n     for p in parts:\n'
        "+        p = p.strip()\n         total += int(p)\n     return total\n"
    )
    patch = (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,4 @@\n one\n two\n three\n+four\n"
        + LOW_FOR_PARSE_LINE
        + second
    )
    moved = ("rows.py hunk 1: offset -3 lines", "rows.py hunk 2: offset -3 lines")
    # A stale first line in notes.txt sends the whole patch to GNU patch, which fuzzes it.
    stale = patch.replace(" one\n", " uno\n")
    cases = (("git", patch, moved), ("patch", stale, ("notes.txt hunk 1: fuzz 1", *moved)))
    for method, text, expected in cases:
        files = {"rows.py": ROWS_PY, "notes.txt": notes}
        with worktree(make_repo(tmp_path / method, files), "HEAD") as wt:
            result = apply_patch(wt.path, text)
            assert result.method == method
            assert result.fuzz_notes == expected
            assert lines_of(wt, "rows.py")[16] == "        p = p.strip()"


def test_a_go_header_naming_a_local_type_is_accepted(tmp_path: Path) -> None:
    # git's `golang` diff driver names the nearest `type … struct {` line, even inside a func.
    source = (
        "package rows\n\nfunc TestRows() {\n\ttype testCase struct {\n\t\tin string\n\t}\n"
        '\tcases := []testCase{{"a"}}\n\tfor range cases {\n\t}\n}\n'
    )
    patch = (
        "--- a/rows.go\n+++ b/rows.go\n@@ -10,3 +10,4 @@ type testCase struct {\n"
        '\tcases := []testCase{{"a"}}\n\tfor range cases {\n+\t\t_ = 1\n\t}\n'
    )
    patch = patch.replace("\n\t", "\n \t")
    with worktree(make_repo(tmp_path / "r", {"rows.go": source}), "HEAD") as wt:
        assert apply_patch(wt.path, patch).fuzz_notes == ("rows.go hunk 1: offset -3 lines",)
        assert lines_of(wt, "rows.go")[8] == "\t\t_ = 1"
