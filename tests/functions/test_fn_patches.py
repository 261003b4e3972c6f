"""Patches: SEARCH/REPLACE blocks and unified diffs, exact then whitespace-tolerant, all or none."""

from __future__ import annotations

import pytest

from speedproof.functions.patches import PatchFailure, apply_patch, changed_lines

SOURCE = """def solve(xs, m):
    seen = []
    for x in xs:
        r = x % m
        if r not in seen:
            seen.append(r)
    return len(seen)
"""


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def failure(source: str, patch: str) -> str:
    with pytest.raises(PatchFailure) as caught:
        apply_patch(source, patch)
    return caught.value.code


def test_an_exact_block_replaces_its_lines() -> None:
    patch = block(
        "    seen = []\n    for x in xs:\n        r = x % m\n        if r not in seen:\n"
        "            seen.append(r)\n    return len(seen)\n",
        "    return len({x % m for x in xs})\n",
    )
    assert apply_patch(SOURCE, "Some prose first.\n" + patch) == (
        "def solve(xs, m):\n    return len({x % m for x in xs})\n"
    )


def test_a_block_written_without_indentation_is_matched_and_reindented() -> None:
    patch = block("if r not in seen:   \n    seen.append(r)\n", "seen.append(r)\n")
    result = apply_patch(SOURCE, patch)
    assert "        seen.append(r)\n    return" in result
    assert "if r not in seen" not in result


def test_several_blocks_apply_in_order() -> None:
    patch = block("    seen = []\n", "    seen = set()\n") + block(
        "            seen.append(r)\n", "            seen.add(r)\n"
    )
    result = apply_patch(SOURCE, patch)
    assert "seen = set()" in result and "seen.add(r)" in result


def test_a_search_text_that_is_not_there_is_patch_not_found() -> None:
    assert failure(SOURCE, block("    seen = {}\n", "    seen = set()\n")) == "patch_not_found"


def test_a_search_text_found_twice_is_patch_ambiguous() -> None:
    source = "def solve(xs):\n    a = 1\n    a = 1\n    return a\n"
    assert failure(source, block("    a = 1\n", "    a = 2\n")) == "patch_ambiguous"


def test_a_block_that_changes_nothing_is_patch_noop() -> None:
    assert failure(SOURCE, block("    seen = []\n", "    seen = []\n")) == "patch_noop"


def test_a_block_that_only_changes_whitespace_is_patch_noop() -> None:
    assert failure(SOURCE, block("    seen = []\n", "    seen = []   \n")) == "patch_noop"


def test_more_than_sixty_changed_lines_is_patch_too_large() -> None:
    replacement = "".join(f"    v{i} = {i}\n" for i in range(70))
    assert failure(SOURCE, block("    seen = []\n", replacement)) == "patch_too_large"


@pytest.mark.parametrize(
    "patch",
    [
        "just words, no patch",
        "<<<<<<< SEARCH\n    seen = []\n=======\n    seen = set()\n",
        "<<<<<<< SEARCH\n    seen = []\n>>>>>>> REPLACE\n",
        "=======\n<<<<<<< SEARCH\n    seen = []\n=======\nx\n>>>>>>> REPLACE\n",
        "<<<<<<< SEARCH\n\n=======\n    x = 1\n>>>>>>> REPLACE\n",
    ],
)
def test_broken_markers_are_patch_malformed(patch: str) -> None:
    assert failure(SOURCE, patch) == "patch_malformed"


def test_a_failing_second_block_leaves_nothing_applied() -> None:
    patch = block("    seen = []\n", "    seen = set()\n") + block("    missing\n", "    x\n")
    assert failure(SOURCE, patch) == "patch_not_found"


def test_a_unified_diff_applies() -> None:
    diff = (
        "--- a/solve.py\n+++ b/solve.py\n@@ -1,7 +1,2 @@\n def solve(xs, m):\n"
        "-    seen = []\n-    for x in xs:\n-        r = x % m\n-        if r not in seen:\n"
        "-            seen.append(r)\n-    return len(seen)\n+    return len({x % m for x in xs})\n"
    )
    assert apply_patch(SOURCE, diff) == "def solve(xs, m):\n    return len({x % m for x in xs})\n"


def test_a_diff_hunk_uses_its_line_number_to_pick_between_equal_contexts() -> None:
    source = "def solve(xs):\n    a = 1\n    b = 0\n    a = 1\n    return a + b\n"
    diff = "@@ -4,1 +4,1 @@\n-    a = 1\n+    a = 2\n"
    assert (
        apply_patch(source, diff)
        == "def solve(xs):\n    a = 1\n    b = 0\n    a = 2\n    return a + b\n"
    )


def test_a_diff_touching_two_files_is_patch_malformed() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n"
    assert failure("a\n", diff) == "patch_malformed"


def test_changed_lines_counts_the_larger_side_of_each_region() -> None:
    assert changed_lines("a\nb\nc\n", "a\nx\ny\nz\nc\n") == 3
    assert changed_lines("a\nb\n", "a\nb\n") == 0
