"""Whole-function and diff answers on logstat's real Go source, in a real git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from speedproof.agents.edits import EditRejected, answer_to_patch
from speedproof.judge.build.go import find_go
from speedproof.judge.worktree.apply import apply_patch
from support.edits import EXAMPLES, answer, applies_cleanly, changed_lines, example_repo
from support.git import commit_all

NORMALIZE = """\
// normalizeEndpoint turns a request target into the endpoint that served it:
// the query string goes, and path segments that are identifiers (hex digits
// and dashes with at least one digit: numbers, object ids, hashes, UUIDs)
// become ":id", so that /orders/1042/items and /orders/77/items count as one
// endpoint.
func normalizeEndpoint(target string) string {
	segments := strings.Split(pathOf(target), "/")
	for i, s := range segments {
		if idSegment.MatchString(s) {
			segments[i] = ":id"
		}
	}
	return strings.Join(segments, "/")
}
"""
HOIST = """\
// idSegment matches a path segment that is an identifier rather than a name.
var idSegment = regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)
"""


@pytest.fixture
def logstat(tmp_path: Path) -> tuple[Path, Path]:
    return example_repo(tmp_path, "logstat")


def run(logstat: tuple[Path, Path], **fields: object) -> tuple[str, Path]:
    root, target_rel = logstat
    result = answer_to_patch(answer(**fields), worktree=root, target_rel=target_rel, language="go")
    return result.patch, root / target_rel


def go_build(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GOFLAGS": "-buildvcs=false", "GOTOOLCHAIN": "local"}
    return subprocess.run(
        [str(find_go()), "build", "-o", os.devnull, "."],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_hoisting_a_regexp_gives_the_same_file_as_the_recorded_speedup_patch(
    logstat: tuple[Path, Path], tmp_path: Path
) -> None:
    patch, target = run(
        logstat,
        kind="function",
        file="parse.go",
        function="main.normalizeEndpoint",
        source=NORMALIZE,
        preamble=HOIST,
    )
    assert "diff --git a/examples/logstat/parse.go b/examples/logstat/parse.go" in patch
    applies_cleanly(logstat[0], patch, "go")
    spliced = (target / "parse.go").read_text()
    # The recorded patch, applied to a pristine copy, is what a careful human wrote.
    pristine, pristine_rel = example_repo(tmp_path / "pristine", "logstat")
    recorded = (EXAMPLES / "logstat/patches/speedup-hoist-regexp.patch").read_text()
    prefixed = recorded.replace(" a/", " a/examples/logstat/").replace(
        " b/", " b/examples/logstat/"
    )
    apply_patch(pristine, prefixed)
    assert spliced == (pristine / pristine_rel / "parse.go").read_text()


def test_a_spliced_method_found_by_its_profile_name_still_builds(
    logstat: tuple[Path, Path],
) -> None:
    target = logstat[0] / logstat[1]
    old = (target / "stats.go").read_text()
    start = old.index("func (st *stats) endpoint(")
    method = old[start : old.index("\n}\n", start) + 3]
    faster = method.replace("func (st *stats) endpoint(", "func (st *stats) endpoint(", 1)
    faster = faster.replace("{\n", "{\n\t// looked up once per request\n", 1)
    patch, _ = run(logstat, kind="function", function="main.(*stats).endpoint", source=faster)
    assert changed_lines(patch) == ["+\t// looked up once per request"]
    applies_cleanly(logstat[0], patch, "go")
    built = go_build(target)
    assert built.returncode == 0, built.stderr


@pytest.mark.parametrize("name", ["(*stats).addLine", "stats.addLine", "addLine"])
def test_a_method_is_found_by_each_of_its_spellings(logstat: tuple[Path, Path], name: str) -> None:
    target = logstat[0] / logstat[1]
    old = (target / "stats.go").read_text()
    start = old.index("func (st *stats) addLine(")
    method = old[start : old.index("\n}\n", start) + 3]
    patch, _ = run(
        logstat,
        kind="function",
        file="stats.go",
        function=name,
        source=method.replace("{\n", "{\n\t_ = 0\n", 1),
    )
    assert changed_lines(patch) == ["+\t_ = 0"]


def test_a_missing_import_goes_into_the_block_in_sorted_place(logstat: tuple[Path, Path]) -> None:
    patch, target = run(
        logstat,
        kind="function",
        file="parse.go",
        function="pathOf",
        source='func pathOf(target string) string {\n\tpath, _, _ := strings.Cut(target, "?")\n'
        "\treturn path\n}\n",
        preamble="var _ = bufio.NewReader",
        imports=['"bufio"', "strings"],
    )
    applies_cleanly(logstat[0], patch, "go")
    text = (target / "parse.go").read_text()
    assert text.startswith('package main\n\nimport (\n\t"bufio"\n\t"fmt"\n\t"regexp"\n')
    assert text.count('"strings"') == 1
    built = go_build(target)
    assert built.returncode == 0, built.stderr


def test_a_single_import_becomes_a_block(logstat: tuple[Path, Path]) -> None:
    root, target_rel = logstat
    (root / target_rel / "extra.go").write_text(
        'package main\n\nimport "strings"\n\n// shout upper-cases s.\n'
        "func shout(s string) string {\n\treturn strings.ToUpper(s)\n}\n"
    )
    commit_all(root, "extra")
    patch, target = run(
        logstat,
        kind="function",
        file="extra.go",
        function="shout",
        source="func shout(s string) string {\n\treturn strings.ToUpper(s) + fmt.Sprint()\n}\n",
        imports=["fmt"],
    )
    applies_cleanly(root, patch, "go")
    assert (target / "extra.go").read_text() == (
        'package main\n\nimport (\n\t"fmt"\n\t"strings"\n)\n\n// shout upper-cases s.\n'
        "func shout(s string) string {\n\treturn strings.ToUpper(s) + fmt.Sprint()\n}\n"
    )


def test_a_go_answer_with_a_syntax_error_is_a_syntax_error(logstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            logstat,
            kind="function",
            file="parse.go",
            function="pathOf",
            source='func pathOf(target string) string {\n\tpath, _, _ := strings.Cut(target, "?"\n'
            "\treturn path\n}\n",
        )
    assert caught.value.kind == "syntax-error"
    assert "line" in str(caught.value)


def test_a_go_source_declaring_another_function_is_a_mismatch(logstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(
            logstat,
            kind="function",
            file="parse.go",
            function="pathOf",
            source="func pathFor(target string) string {\n\treturn target\n}\n",
        )
    assert caught.value.kind == "function-mismatch"


def test_a_go_function_that_does_not_exist_is_named(logstat: tuple[Path, Path]) -> None:
    with pytest.raises(EditRejected) as caught:
        run(logstat, kind="function", function="main.parseLines", source="func parseLines() {}\n")
    assert caught.value.kind == "function-not-found"
    assert "main.parseLine" in str(caught.value)


def test_a_bare_method_name_on_two_types_is_ambiguous(logstat: tuple[Path, Path]) -> None:
    root, target_rel = logstat
    (root / target_rel / "names.go").write_text(
        "package main\n\ntype a struct{}\ntype b struct{}\n\n"
        'func (a) String() string { return "a" }\nfunc (*b) String() string { return "b" }\n'
    )
    commit_all(root, "two String methods")
    with pytest.raises(EditRejected) as caught:
        run(
            logstat,
            kind="function",
            function="String",
            source='func (a) String() string { return "A" }\n',
        )
    assert caught.value.kind == "function-ambiguous"
    patch, _ = run(
        logstat,
        kind="function",
        function="main.(*b).String",
        source='func (*b) String() string { return "B" }\n',
    )
    assert changed_lines(patch) == [
        '-func (*b) String() string { return "b" }',
        '+func (*b) String() string { return "B" }',
    ]


def test_a_recorded_go_diff_with_target_relative_paths_applies(logstat: tuple[Path, Path]) -> None:
    recorded = (EXAMPLES / "logstat/patches/speedup-slow-report-builder.patch").read_text()
    # Without a/ b/ prefixes, with prose around it, as models often write it.
    loose = recorded.replace("--- a/", "--- ").replace("+++ b/", "+++ ")
    patch, target = run(logstat, kind="diff", diff=f"Here is the change:\n{loose}\nThat's all.")
    assert "+++ b/examples/logstat/report.go" in patch
    applies_cleanly(logstat[0], patch, "go")
    assert "var out strings.Builder" in (target / "report.go").read_text()
