"""Whole-function and diff answers on textstat's real Python source, in a real git repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from speedproof.agents.edits import EditRejected, answer_to_patch
from support.edits import EXAMPLES, answer, applies_cleanly, changed_lines, example_repo
from support.git import commit_all

WORDS = "textstat/words.py"
FAST_STOPWORD = "def is_stopword(word: str) -> bool:\n    return word in _STOPWORD_SET\n"


@pytest.fixture
def textstat(tmp_path: Path) -> tuple[Path, Path]:
    return example_repo(tmp_path, "textstat")


def run(textstat: tuple[Path, Path], **fields: object) -> tuple[str, Path]:
    root, target_rel = textstat
    result = answer_to_patch(
        answer(**fields), worktree=root, target_rel=target_rel, language="python"
    )
    return result.patch, root / target_rel


def test_a_whole_function_with_a_preamble_becomes_a_repository_relative_patch(
    textstat: tuple[Path, Path],
) -> None:
    root, target_rel = textstat
    before = (root / target_rel / WORDS).read_text()
    result = answer_to_patch(
        answer(
            kind="function",
            file=WORDS,
            function="textstat.words.is_stopword",
            source=FAST_STOPWORD,
            preamble="_STOPWORD_SET = frozenset(STOPWORDS)\n",
        ),
        worktree=root,
        target_rel=target_rel,
        language="python",
    )
    assert result.files == ("examples/textstat/textstat/words.py",)
    assert result.kind == "function"
    assert "+++ b/examples/textstat/textstat/words.py" in result.patch
    assert changed_lines(result.patch) == [
        "+_STOPWORD_SET = frozenset(STOPWORDS)",
        "+",
        "+",
        "-    return word in STOPWORDS",
        "+    return word in _STOPWORD_SET",
    ]
    applies_cleanly(root, result.patch, "python")
    after = (root / target_rel / WORDS).read_text()
    # Everything above the preamble is untouched, byte for byte.
    cut = before.index("def is_stopword")
    assert after.startswith(before[:cut] + "_STOPWORD_SET = frozenset(STOPWORDS)\n\n\ndef is_")
    check = "from textstat.words import is_stopword; print(is_stopword('the'), is_stopword('cat'))"
    shown = subprocess.run(
        [sys.executable, "-c", check],
        cwd=root / target_rel,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout == "True False\n"


def test_a_method_is_found_by_its_qualified_name_and_keeps_its_indentation(
    textstat: tuple[Path, Path],
) -> None:
    source = (
        "def lines_containing(self, word: str) -> int:\n"
        '    """In how many lines `word` occurs."""\n'
        "    count = 0\n"
        "    for tokens in self.line_words:\n"
        "        if word in tokens:\n"
        "            count += 1\n"
        "    return count\n"
    )
    patch, target = run(
        textstat,
        kind="function",
        file="textstat/analysis.py",
        function="textstat.analysis.TextStats.lines_containing",
        source=source,
    )
    applies_cleanly(textstat[0], patch, "python")
    text = (target / "textstat/analysis.py").read_text()
    assert "    def lines_containing(self, word: str) -> int:\n        count = 0" not in text
    assert "        for tokens in self.line_words:\n            if word in tokens:\n" in text
    assert "-        return sum(1 for tokens in self.line_words if word in tokens)" in patch


def test_a_bare_name_without_a_file_is_found_by_searching_the_target(
    textstat: tuple[Path, Path],
) -> None:
    patch, _ = run(
        textstat,
        kind="function",
        function="is_stopword",
        source=FAST_STOPWORD,
        preamble="_STOPWORD_SET = frozenset(STOPWORDS)",
    )
    assert "diff --git a/examples/textstat/textstat/words.py" in patch


def test_missing_imports_go_after_the_existing_ones_and_present_ones_are_not_repeated(
    textstat: tuple[Path, Path],
) -> None:
    source = (
        "def words(text: str) -> list[str]:\n"
        '    """The words of `text`, lower-cased, with typographic apostrophes made plain."""\n'
        '    return _PATTERN.findall(text.lower().replace("\\u2019", "\'"))\n'
    )
    patch, target = run(
        textstat,
        kind="function",
        file=WORDS,
        function="words",
        source=source,
        preamble="_PATTERN = re.compile(WORD_PATTERN)",
        imports=["import re", "from functools import lru_cache"],
    )
    applies_cleanly(textstat[0], patch, "python")
    text = (target / WORDS).read_text()
    assert text.count("import re\n") == 1
    assert "import re\nfrom functools import lru_cache\n\n# Runs of letters" in text


EXTRA = (
    '"""Extra."""\n\n\n# Old comment about f.\ndef f(x):\n    return x + x\n\n\n'
    "def g():\n    return 1\n"
)


@pytest.mark.parametrize(
    ("written", "kept"),
    [("# New comment.\n", "# New comment.\n"), ("", "# Old comment about f.\n")],
)
def test_a_comment_written_above_the_new_function_replaces_the_old_one(
    textstat: tuple[Path, Path], written: str, kept: str
) -> None:
    root, target_rel = textstat
    (root / target_rel / "textstat/extra.py").write_text(EXTRA)
    commit_all(root, "extra")
    patch, target = run(
        textstat,
        kind="function",
        file="textstat/extra.py",
        function="f",
        source=f"{written}def f(x):\n    return 2 * x\n",
    )
    applies_cleanly(root, patch, "python")
    assert (target / "textstat/extra.py").read_text() == EXTRA.replace(
        "# Old comment about f.\n", kept
    ).replace("x + x", "2 * x")


def test_a_function_that_does_not_exist_is_named_with_a_suggestion(
    textstat: tuple[Path, Path],
) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="function",
            file=WORDS,
            function="textstat.words.is_stopwrd",
            source=FAST_STOPWORD,
        )
    assert caught.value.kind == "function-not-found"
    assert "textstat.words.is_stopword" in str(caught.value)


def test_a_name_that_matches_two_functions_is_ambiguous(textstat: tuple[Path, Path]) -> None:
    root, target_rel = textstat
    extra = root / target_rel / "textstat/more.py"
    extra.write_text("def is_stopword(word):\n    return False\n")
    commit_all(root, "a second is_stopword")
    with pytest.raises(EditRejected) as caught:
        run(textstat, kind="function", function="is_stopword", source=FAST_STOPWORD)
    assert caught.value.kind == "function-ambiguous"
    assert "textstat/more.py" in str(caught.value) and WORDS in str(caught.value)


def test_a_new_source_with_a_syntax_error_is_a_syntax_error(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="function",
            file=WORDS,
            function="is_stopword",
            source="def is_stopword(word: str) -> bool:\n    return word in (STOPWORDS\n",
        )
    assert caught.value.kind == "syntax-error"


def test_a_preamble_that_compiles_to_nothing_valid_is_a_syntax_error(
    textstat: tuple[Path, Path],
) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="function",
            file=WORDS,
            function="is_stopword",
            source=FAST_STOPWORD,
            preamble="return 1\n",
        )
    assert caught.value.kind == "syntax-error"
    assert "would not compile" in str(caught.value)


def test_a_new_source_that_defines_another_function_is_a_mismatch(
    textstat: tuple[Path, Path],
) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="function",
            file=WORDS,
            function="is_stopword",
            source="def is_stop(word: str) -> bool:\n    return False\n",
        )
    assert caught.value.kind == "function-mismatch"


def test_an_unchanged_function_is_no_change(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="function",
            file=WORDS,
            function="is_stopword",
            source="def is_stopword(word: str) -> bool:\n    return word in STOPWORDS\n",
        )
    assert caught.value.kind == "no-change"


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/etc/passwd"])
def test_a_file_outside_the_target_folder_is_refused(
    textstat: tuple[Path, Path], name: str
) -> None:
    with pytest.raises(EditRejected) as caught:
        run(textstat, kind="function", file=name, function="is_stopword", source=FAST_STOPWORD)
    assert caught.value.kind == "outside-target"


def test_a_missing_file_is_named(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(textstat, kind="function", file="textstat/nope.py", function="f", source="def f(): 0")
    assert caught.value.kind == "file-missing"


def test_a_recorded_diff_with_target_relative_paths_becomes_a_repository_patch(
    textstat: tuple[Path, Path],
) -> None:
    recorded = (EXAMPLES / "textstat/patches/speedup-stopword-set.patch").read_text()
    # Models miscount hunk lines; the counts are recomputed from the hunk bodies.
    mangled = "```diff\n" + recorded.replace("@@ -9,8 +9,9 @@", "@@ -9,7 +9,12 @@") + "```\n"
    patch, target = run(textstat, kind="diff", diff=mangled)
    assert "--- a/examples/textstat/textstat/words.py" in patch
    applies_cleanly(textstat[0], patch, "python")
    assert "STOPWORDS = frozenset({" in (target / WORDS).read_text()


def test_a_diff_whose_context_is_not_in_the_file_does_not_apply(
    textstat: tuple[Path, Path],
) -> None:
    recorded = (EXAMPLES / "textstat/patches/speedup-stopword-set.patch").read_text()
    with pytest.raises(EditRejected) as caught:
        run(textstat, kind="diff", diff=recorded.replace(" WORD_PATTERN =", " WORDS_PATTERN ="))
    assert caught.value.kind == "diff-does-not-apply"


def test_a_diff_without_file_headers_is_malformed(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(textstat, kind="diff", diff="@@ -1 +1 @@\n-a\n+b\n")
    assert caught.value.kind == "diff-malformed"


def test_a_diff_that_deletes_a_file_is_malformed(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            kind="diff",
            diff="--- a/textstat/words.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n",
        )
    assert caught.value.kind == "diff-malformed"


def test_a_diff_may_create_a_new_module_in_the_target(textstat: tuple[Path, Path]) -> None:
    created = "--- /dev/null\n+++ b/textstat/fast.py\n@@ -0,0 +1,2 @@\n"
    created += "+def fast():\n+    return 1\n"
    root, target_rel = textstat
    result = answer_to_patch(
        answer(kind="diff", diff=created), worktree=root, target_rel=target_rel, language="python"
    )
    assert result.files == ("examples/textstat/textstat/fast.py",)
    assert "new file mode 100644\n--- /dev/null\n" in result.patch
    applies_cleanly(root, result.patch, "python")
    assert (root / target_rel / "textstat/fast.py").read_text() == "def fast():\n    return 1\n"
