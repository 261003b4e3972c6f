"""SEARCH/REPLACE answers on both examples' real files, in real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.agents.edits import EditRejected, EditResult, answer_to_patch
from support.edits import answer, applies_cleanly, changed_lines, example_repo
from support.git import commit_all


def block(file: str, search: str, replace: str) -> dict[str, str]:
    return {"file": file, "search": search, "replace": replace}


def run(repo: tuple[Path, Path], language: str, *blocks: dict[str, str]) -> EditResult:
    root, target_rel = repo
    return answer_to_patch(
        answer(kind="search_replace", blocks=list(blocks)),
        worktree=root,
        target_rel=target_rel,
        language=language,
    )


@pytest.fixture
def textstat(tmp_path: Path) -> tuple[Path, Path]:
    return example_repo(tmp_path, "textstat")


@pytest.fixture
def logstat(tmp_path: Path) -> tuple[Path, Path]:
    return example_repo(tmp_path, "logstat")


def test_blocks_apply_in_order_to_a_python_file(textstat: tuple[Path, Path]) -> None:
    result = run(
        textstat,
        "python",
        block("textstat/words.py", "STOPWORDS = [\n", "STOPWORDS = frozenset({\n"),
        block("textstat/words.py", '"yourselves",\n]\n', '"yourselves",\n})\n'),
    )
    assert result.kind == "search_replace"
    assert result.files == ("examples/textstat/textstat/words.py",)
    assert result.notes == ()
    assert changed_lines(result.patch) == [
        "-STOPWORDS = [",
        "+STOPWORDS = frozenset({",
        "-]",
        "+})",
    ]
    applies_cleanly(textstat[0], result.patch, "python")


def test_a_later_block_sees_what_an_earlier_one_wrote(textstat: tuple[Path, Path]) -> None:
    result = run(
        textstat,
        "python",
        block("textstat/words.py", "STOPWORDS = [\n", "STOPWORDS_LIST = [\n"),
        block("textstat/words.py", "STOPWORDS_LIST = [\n", "STOPWORD_LIST = [\n"),
    )
    assert changed_lines(result.patch) == ["-STOPWORDS = [", "+STOPWORD_LIST = ["]


def test_blocks_in_two_files_make_one_patch(logstat: tuple[Path, Path]) -> None:
    result = run(
        logstat,
        "go",
        block(
            "parse.go",
            '\tpath, _, _ := strings.Cut(target, "?")\n',
            '\tpath, _, _ := strings.Cut(target, "?") // query dropped\n',
        ),
        block("report.go", "\tbarWidth   = 40\n", "\tbarWidth   = 40 // columns\n"),
    )
    assert result.files == ("examples/logstat/parse.go", "examples/logstat/report.go")
    applies_cleanly(logstat[0], result.patch, "go")


def test_a_search_with_spaces_for_tabs_matches_ignoring_whitespace_and_keeps_the_tabs(
    logstat: tuple[Path, Path],
) -> None:
    search = (
        "    idSegment := regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)\n"
        '    segments := strings.Split(pathOf(target), "/")\n'
    )
    replace = '    segments := strings.Split(pathOf(target), "/")\n    idSegment := idPattern\n'
    result = run(logstat, "go", block("parse.go", search, replace))
    assert len(result.notes) == 1 and "ignored" in result.notes[0]
    assert changed_lines(result.patch) == [
        "-\tidSegment := regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)",
        "+\tidSegment := idPattern",
    ]


def test_a_search_text_found_twice_is_ambiguous(logstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(logstat, "go", block("report.go", "\tsort.Slice(", "\tslices.SortFunc("))
    assert caught.value.kind == "search-ambiguous"
    assert "block 1 (report.go)" in str(caught.value)


def test_a_search_text_found_twice_only_ignoring_whitespace_is_ambiguous(
    logstat: tuple[Path, Path],
) -> None:
    with pytest.raises(EditRejected) as caught:
        run(logstat, "go", block("report.go", "  if a != b {\n    return a > b\n  }\n", ""))
    assert caught.value.kind == "search-ambiguous"
    assert "whitespace is ignored" in str(caught.value)


def test_a_search_text_that_is_nowhere_is_not_found(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(textstat, "python", block("textstat/words.py", "STOPWORDS = (\n", "x = 1\n"))
    assert caught.value.kind == "search-not-found"
    assert "'STOPWORDS = ('" in str(caught.value)


def test_a_block_for_a_missing_file_is_named(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(textstat, "python", block("textstat/nowhere.py", "a", "b"))
    assert caught.value.kind == "file-missing"


def test_blocks_that_restore_the_text_are_no_change(textstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            textstat,
            "python",
            block("textstat/words.py", "import re\n", "import re as _re\n"),
            block("textstat/words.py", "import re as _re\n", "import re\n"),
        )
    assert caught.value.kind == "no-change"


def test_a_file_without_a_final_newline_keeps_it_missing(logstat: tuple[Path, Path]) -> None:
    root, target_rel = logstat
    (root / target_rel / "last.go").write_text("package main\n\nfunc one() int { return 1 }")
    commit_all(root, "no final newline")
    result = run(logstat, "go", block("last.go", "return 1", "return 2"))
    assert result.patch.endswith("+func one() int { return 2 }\n\\ No newline at end of file\n")
    applies_cleanly(root, result.patch, "go")
    assert (root / target_rel / "last.go").read_text().endswith("return 2 }")
