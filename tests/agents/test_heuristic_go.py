"""The heuristic Go rules on small programs: each rewrite is written, and the rewritten program,
built and run with the real Go toolchain, prints exactly what the original printed; each near
miss is declined."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from speedproof.agents.heuristic.subject import Proposal
from support.heuristic_go import go_run, proposal, rewritten, subject_of


def assert_same_output(tmp_path: Path, text: str, found: Proposal) -> str:
    assert found.answer.kind == "function"
    new = rewritten(tmp_path, text, found)
    before, after = go_run(tmp_path / "before", text), go_run(tmp_path / "after", new)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout) == (0, before.stdout), after.stderr
    return new


REGEXP = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"regexp"
    )

    const digits = `[0-9]+`

    // normalize replaces numbers.
    func normalize(path string) string {
    \tnumber := regexp.MustCompile(`^[0-9]+$`)
    \tparts := []string{}
    \tfor _, p := range []byte(path) {
    \t\tparts = append(parts, string(p))
    \t}
    \tword, err := regexp.Compile(`[a-z]+`)
    \tif err != nil {
    \t\treturn ""
    \t}
    \tok, err := regexp.MatchString(digits, path)
    \tfirst := regexp.MustCompile(`/[a-z]+`).FindString(path)
    \treturn fmt.Sprint(number.MatchString(path), word.FindAllString(path, -1), ok, err, first)
    }

    func main() {
    \tfor _, p := range []string{"/a/12/bc", "42", "/x"} {
    \t\tfmt.Println(normalize(p))
    \t}
    }
    """
)


def test_regexps_compiled_per_call_move_to_package_level(tmp_path: Path) -> None:
    found = proposal(REGEXP, "normalize", "go-hoist-regexp")
    assert found is not None
    preamble = found.answer.preamble or ""
    assert "var number = regexp.MustCompile(`^[0-9]+$`)" in preamble
    assert "regexp.Compile(`[a-z]+`)" in preamble and "regexp.Compile(digits)" in preamble
    new = assert_same_output(tmp_path, REGEXP, found)
    body = found.answer.source or ""
    assert "regexp." not in body
    assert new.index("var number") < new.index("// normalize replaces numbers.")


def test_an_aliased_regexp_import_is_used_by_the_hoisted_declarations(tmp_path: Path) -> None:
    text = REGEXP.replace('\t"regexp"', '\tre "regexp"').replace("regexp.", "re.")
    found = proposal(text, "normalize", "go-hoist-regexp")
    assert found is not None and "regexp." not in (found.answer.preamble or "")
    assert "var number = re.MustCompile(`^[0-9]+$`)" in (found.answer.preamble or "")
    assert_same_output(tmp_path, text, found)


@pytest.mark.parametrize(
    "change",
    [
        ("regexp.MustCompile(`^[0-9]+$`)", "regexp.MustCompile(path)"),
        ("regexp.MustCompile(`^[0-9]+$`)", 'regexp.MustCompile("^" + path)'),
        (
            "number := regexp.MustCompile(`^[0-9]+$`)",
            "number := regexp.MustCompile(`x`)\n\tnumber.Longest()",
        ),
    ],
    ids=["from-a-parameter", "built-from-a-variable", "mutated-with-longest"],
)
def test_a_regexp_that_is_not_a_constant_or_is_mutated_is_left_alone(
    change: tuple[str, str],
) -> None:
    text = REGEXP.replace(*change)
    text = text.replace("regexp.Compile(`[a-z]+`)", "regexp.Compile(path)")
    text = text.replace("regexp.MatchString(digits, path)", "true, error(nil)")
    text = text.replace("regexp.MustCompile(`/[a-z]+`).FindString(path)", "path")
    assert proposal(text, "normalize", "go-hoist-regexp") is None


BUILDER = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"os"
    )

    func render(rows []int) string {
    \tout := fmt.Sprintf("%d rows\\n", len(rows))
    \tfor i, r := range rows {
    \t\tif r < 0 {
    \t\t\tcontinue
    \t\t}
    \t\tout += fmt.Sprintf("%3d %5.1f\\n", i, float64(r)/3)
    \t\tout += "-"
    \t}
    \treturn out
    }

    func bar(n int) string {
    \tvar s string
    \tfor i := 0; i < n; i++ {
    \t\ts += "#"
    \t}
    \treturn s + "|"
    }

    func main() {
    \tfmt.Fprint(os.Stdout, render([]int{1, -2, 30, 7}), bar(5), bar(-1), "\\n")
    }
    """
)


@pytest.mark.parametrize("function", ["render", "bar"])
def test_a_string_grown_in_a_loop_is_built_with_a_builder(tmp_path: Path, function: str) -> None:
    found = proposal(BUILDER, function, "go-strings-builder")
    assert found is not None and found.answer.imports == ["strings"]
    assert "strings.Builder" in (found.answer.source or "")
    new = assert_same_output(tmp_path, BUILDER, found)
    assert '\t"strings"\n' in new


def test_a_string_read_inside_its_loop_keeps_its_concatenation() -> None:
    text = BUILDER.replace("if r < 0 {", "if r < 0 || len(out) > 40 {")
    assert proposal(text, "render", "go-strings-builder") is None
    unknown = BUILDER.replace("var s string", "s := label()")
    assert proposal(unknown, "bar", "go-strings-builder") is None


OUTPUT = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"strings"
    )

    func table(rows []string) {
    \tfmt.Println("rows:", len(rows))
    \tfor i, r := range rows {
    \t\tfmt.Printf("%2d %s\\n", i, strings.ToUpper(r))
    \t\tfmt.Print(pad(r), "|")
    \t\tfmt.Println()
    \t}
    }

    func pad(s string) string {
    \treturn fmt.Sprintf("%-6s", s)
    }

    func main() {
    \ttable([]string{"a", "bb", "ccc"})
    \tfmt.Println("after")
    }
    """
)


def test_printing_in_a_loop_is_buffered_and_flushed_on_return(tmp_path: Path) -> None:
    found = proposal(OUTPUT, "table", "go-bufio-stdout")
    assert found is not None and found.answer.imports == ["bufio", "os"]
    source = found.answer.source or ""
    assert "defer bufferedStdout.Flush()" in source and "fmt.Println(" not in source
    assert_same_output(tmp_path, OUTPUT, found)


@pytest.mark.parametrize(
    "change",
    [
        ('fmt.Println("rows:", len(rows))', 'fmt.Println("rows:", len(rows))\n\tdefer os.Exit(0)'),
        ("fmt.Println()", 'fmt.Fprintln(os.Stderr, "row")'),
        ("fmt.Println()", "log.Print(r)"),
        ("fmt.Println()", "elsewhere(r)"),
        ("fmt.Println()", "if _, err := fmt.Println(); err != nil {\n\t\t\treturn\n\t\t}"),
        ("fmt.Println()", "go pad(r)"),
    ],
    ids=["exit", "stderr", "log", "unknown-function", "error-checked", "goroutine"],
)
def test_buffering_is_declined_when_output_could_reorder_or_be_lost(
    change: tuple[str, str],
) -> None:
    text = OUTPUT.replace(*change)
    assert proposal(text, "table", "go-bufio-stdout") is None


def test_buffering_is_declined_when_a_called_function_prints() -> None:
    text = OUTPUT.replace('return fmt.Sprintf("%-6s", s)', "fmt.Print(s)\n\treturn s")
    assert proposal(text, "table", "go-bufio-stdout") is None


ENDS = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"sort"
    )

    type item struct {
    \tkey  int
    \tname string
    }

    func spread(values []int) (int, int, int) {
    \tsorted := make([]int, len(values))
    \tcopy(sorted, values)
    \tsort.Ints(sorted)
    \treturn sorted[0], sorted[len(sorted)-1], len(sorted)
    }

    func firstLast(items []item) (item, item) {
    \tvar kept []item
    \tfor _, it := range items {
    \t\tkept = append(kept, it)
    \t}
    \tsort.SliceStable(kept, func(i, j int) bool { return kept[i].key < kept[j].key })
    \treturn kept[0], kept[len(kept)-1]
    }

    func main() {
    \tvalues := []int{5, 3, 9, 3, 9, 1}
    \tfmt.Println(spread(values))
    \tfmt.Println(values)
    \titems := []item{{2, "b"}, {1, "a"}, {2, "c"}, {1, "d"}, {3, "e"}, {3, "f"}}
    \tfmt.Println(firstLast(items))
    \tfmt.Println(firstLast(items[:1]))
    }
    """
)


@pytest.mark.parametrize("function", ["spread", "firstLast"])
def test_a_copy_sorted_only_for_its_ends_is_scanned_with_the_same_ties(
    tmp_path: Path, function: str
) -> None:
    found = proposal(ENDS, function, "go-scan-not-sort")
    assert found is not None
    assert "sort." not in (found.answer.source or "")
    assert_same_output(tmp_path, ENDS, found)


@pytest.mark.parametrize(
    "change",
    [
        ("sort.SliceStable(kept,", "sort.Slice(kept,"),
        ("return kept[0], kept[len(kept)-1]", "fmt.Println(kept)\n\treturn kept[0], kept[0]"),
        ("var kept []item", "kept := items"),
        (
            "\tfor _, it := range items {",
            "\tdefer func() { fmt.Println(kept) }()\n\tfor _, it := range items {",
        ),
    ],
    ids=["unstable-sort", "used-after-sorting", "shares-the-callers-array", "read-by-a-closure"],
)
def test_a_sort_whose_order_matters_is_left_alone(change: tuple[str, str]) -> None:
    text = ENDS.replace(*change)
    assert proposal(text, "firstLast", "go-scan-not-sort") is None


PREALLOC = textwrap.dedent(
    """\
    package main

    import "fmt"

    type stats struct {
    \tnames []string
    }

    func squares(values []int) []int {
    \tout := make([]int, 0)
    \tfor _, v := range values {
    \t\tout = append(out, v*v)
    \t}
    \treturn out
    }

    func (st *stats) upper() []string {
    \tvar names []string
    \tprefix := ">"
    \tfor i := 0; i < len(st.names); i++ {
    \t\tnames = append(names, prefix+st.names[i])
    \t}
    \treturn names
    }

    func main() {
    \tfmt.Println(squares([]int{1, 2, 3}), squares(nil) == nil, len(squares(nil)))
    \tst := &stats{names: []string{"a", "b"}}
    \tfmt.Println(st.upper(), (&stats{}).upper() == nil)
    }
    """
)


def test_an_append_per_iteration_reserves_the_capacity_up_front(tmp_path: Path) -> None:
    found = proposal(PREALLOC, "squares", "go-prealloc-append")
    assert found is not None
    assert "make([]int, 0, len(values))" in (found.answer.source or "")
    assert_same_output(tmp_path, PREALLOC, found)
    method = proposal(PREALLOC, "upper", "go-prealloc-append")
    assert method is not None and method.answer.imports == ["slices"]
    assert "names = slices.Grow(names, len(st.names))" in (method.answer.source or "")
    assert_same_output(tmp_path / "method", PREALLOC, method)


@pytest.mark.parametrize(
    "change",
    [
        ("\t\tout = append(out, v*v)", "\t\tif v > 1 {\n\t\t\tout = append(out, v*v)\n\t\t}"),
        (
            "\t\tout = append(out, v*v)",
            "\t\tout = append(out, v*v)\n\t\tif v > 2 {\n\t\t\tbreak\n\t\t}",
        ),
        ("range values", "range load()"),
    ],
    ids=["conditional", "break", "bound-is-a-call"],
)
def test_an_append_whose_count_is_not_the_loop_length_is_left_alone(
    change: tuple[str, str],
) -> None:
    text = PREALLOC.replace(*change)
    assert proposal(text, "squares", "go-prealloc-append") is None


def test_without_the_file_a_go_finding_is_reported_but_not_rewritten() -> None:
    alone = subject_of(REGEXP, "normalize", whole_file=False)
    # `digits` could be any package-level name without the file: a possible cause only.
    assert [(f.rule, f.certain) for f in rules.findings(alone)] == [("go-hoist-regexp", False)]
    assert list(rules.proposals(alone)) == []
