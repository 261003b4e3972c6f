"""go-bufio-package-writer on a small Go CLI shaped like golang.org/x/tools' digraph: the writes go
through a package variable `var stdout io.Writer = os.Stdout`, one command swaps in a
bytes.Buffer and restores it, the input is split with a bytes.Buffer and a local function
literal, and `main` calls the command in an `if` initialiser. The rewrite sets the variable to a
bufio.Writer in main, flushed after the call and first thing in its error branch; built and run
with the real Go toolchain it prints exactly what it printed before, on both paths. Each near
miss is declined with its reason in words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.heuristic import declined, go_same_output
from support.heuristic_go import go_run, proposal, rewritten, subject_of

RULE = "go-bufio-package-writer"

GRAPH = textwrap.dedent(
    """\
    package main

    import (
    \t"bytes"
    \t"fmt"
    \t"io"
    \t"os"
    \t"sort"
    \t"strings"
    )

    // Overridable for redirection.
    var stdout io.Writer = os.Stdout

    func words(line string) []string {
    \tvar current bytes.Buffer
    \tvar out []string
    \toffset := 0
    \tnext := func() byte {
    \t\toffset++
    \t\treturn line[offset-1]
    \t}
    \tfor offset < len(line) {
    \t\tc := next()
    \t\tif c == ' ' {
    \t\t\tout = append(out, current.String())
    \t\t\tcurrent.Reset()
    \t\t\tcontinue
    \t\t}
    \t\tcurrent.WriteByte(c)
    \t}
    \treturn append(out, current.String())
    }

    func run(cmd string, lines []string) error {
    \tedges := map[string][]string{}
    \tfor _, line := range lines {
    \t\tw := words(line)
    \t\tfor _, to := range w[1:] {
    \t\t\tedges[to] = append(edges[to], w[0])
    \t\t}
    \t}
    \tswitch cmd {
    \tcase "transpose":
    \t\tvar out []string
    \t\tfor to, froms := range edges {
    \t\t\tfor _, from := range froms {
    \t\t\t\tout = append(out, to+" "+from)
    \t\t\t}
    \t\t}
    \t\tsort.Strings(out)
    \t\tfor _, e := range out {
    \t\t\tfmt.Fprintln(stdout, e)
    \t\t}
    \tcase "sorted":
    \t\tbuf := new(bytes.Buffer)
    \t\told := stdout
    \t\tstdout = buf
    \t\tfor to := range edges {
    \t\t\tfmt.Fprintln(stdout, to)
    \t\t}
    \t\tsorted := strings.SplitAfter(buf.String(), "\\n")
    \t\tsort.Strings(sorted)
    \t\tstdout = old
    \t\tio.WriteString(stdout, strings.Join(sorted, ""))
    \tdefault:
    \t\tfmt.Fprintln(stdout, "partial output before the error")
    \t\treturn fmt.Errorf("no command %q", cmd)
    \t}
    \treturn nil
    }

    func main() {
    \tvar lines []string
    \tfor i := 0; i < 300; i++ {
    \t\tlines = append(lines, fmt.Sprintf("n%d n%d n%d", i, (i*7)%300, (i*13)%300))
    \t}
    \tcmd := "transpose"
    \tif len(os.Args) > 1 {
    \t\tcmd = os.Args[1]
    \t}
    \tif err := run(cmd, lines); err != nil {
    \t\tfmt.Fprintf(os.Stderr, "graph: %s\\n", err)
    \t\tos.Exit(1)
    \t}
    }
    """
)


def test_the_package_writer_is_buffered_in_main_and_prints_the_same(tmp_path: Path) -> None:
    found = proposal(GRAPH, "run", RULE)
    assert found is not None
    new = found.files["main.go"]
    assert (
        "\tbufferedStdout := bufio.NewWriter(os.Stdout)\n\tstdout = bufferedStdout\n"
        "\tif err := run(cmd, lines); err != nil {\n\t\tbufferedStdout.Flush()\n"
    ) in new
    assert "\t\tos.Exit(1)\n\t}\n\tbufferedStdout.Flush()\n}\n" in new
    # The hot function itself is untouched: the change is in main.
    assert subject_of(new, "run").source == subject_of(GRAPH, "run").source
    go_same_output(tmp_path, GRAPH, found)


def test_the_swap_command_and_the_error_path_print_the_same_after_the_rewrite(
    tmp_path: Path,
) -> None:
    found = proposal(GRAPH, "run", RULE)
    assert found is not None
    new = rewritten(tmp_path / "edit", GRAPH, found)
    for command in ("sorted", "nope"):
        text = GRAPH.replace('cmd := "transpose"', f'cmd := "{command}"')
        after = new.replace('cmd := "transpose"', f'cmd := "{command}"')
        before_run = go_run(tmp_path / f"before-{command}", text)
        after_run = go_run(tmp_path / f"after-{command}", after)
        assert before_run.stdout.count("\n") > 0
        assert (after_run.returncode, after_run.stdout, after_run.stderr) == (
            before_run.returncode,
            before_run.stdout,
            before_run.stderr,
        )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ("var stdout io.Writer = os.Stdout", "var stdout = os.Stdout"),
            "is not declared alone in this file as `var stdout io.Writer = os.Stdout`",
        ),
        (
            ("\t\tos.Exit(1)\n\t}\n", '\t\tos.Exit(1)\n\t}\n\tfmt.Fprintln(stdout, "done")\n'),
            "in main may write to stdout too",
        ),
        (
            ('\tcmd := "transpose"\n', '\tcmd := "transpose"\n\tdefer fmt.Println()\n'),
            "main defers a call or starts a goroutine",
        ),
        (
            ("\t\tsort.Strings(out)\n", '\t\tsort.Strings(out)\n\t\tfmt.Println("rows")\n'),
            "may write output or end the process",
        ),
        (
            ("\t\tsort.Strings(out)\n", "\t\tsort.Strings(out)\n\t\tkeep(stdout)\n"),
            "uses stdout other than by writing to it",
        ),
    ],
    ids=["file-typed", "main-writes-after", "main-defers", "another-print", "handed-on"],
)
def test_a_package_writer_that_could_show_the_buffering_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = GRAPH.replace(*change)
    if "keep(stdout)" in text:
        text += "\nfunc keep(w io.Writer) {}\n"
    assert change[1] in text
    assert words in declined(subject_of(text, "run"), RULE)


def test_a_write_method_on_the_package_writer_is_followed_too(tmp_path: Path) -> None:
    text = GRAPH.replace(
        "\t\t\tfmt.Fprintln(stdout, e)\n", '\t\t\tstdout.Write([]byte(e + "\\n"))\n'
    )
    assert "stdout.Write(" in text
    found = proposal(text, "run", RULE)
    assert found is not None
    assert "`stdout.Write(" in found.finding.evidence
    go_same_output(tmp_path, text, found)
