"""go-bufio-writer on a small Go CLI: the writes go through an io.Writer parameter and `main`
passes os.Stdout; the call site gets a bufio.Writer flushed right after the call, and the
program built and run with the real Go toolchain prints exactly what it printed before. Each
near miss is declined with its reason in words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from speedproof.agents.heuristic import rules
from support.heuristic import declined, go_same_output
from support.heuristic_go import proposal, subject_of

RULE = "go-bufio-writer"

COUNTS = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"io"
    \t"os"
    \t"sort"
    \t"strings"
    )

    type entry struct {
    \tword  string
    \tcount int
    }

    // printCounts writes one line per word, most frequent first.
    func printCounts(w io.Writer, entries []entry, total int) {
    \tfmt.Fprintf(w, "%d words, %d distinct\\n", total, len(entries))
    \tfor i, e := range entries {
    \t\tfmt.Fprintf(w, "%4d %-12s %6d ", i+1, e.word, e.count)
    \t\tbar(w, e.count)
    \t}
    \tio.WriteString(w, "end\\n")
    }

    // bar draws a bar of up to 20 marks.
    func bar(out io.Writer, n int) {
    \tout.Write([]byte(strings.Repeat("#", n%20) + "\\n"))
    }

    func main() {
    \ttext := strings.Repeat("the quick brown fox jumps over the lazy dog and the cat ", 40)
    \tseen := map[string]int{}
    \tfor _, word := range strings.Fields(text) {
    \t\tseen[word]++
    \t}
    \tentries := make([]entry, 0, len(seen))
    \tfor word, n := range seen {
    \t\tentries = append(entries, entry{word, n})
    \t}
    \tsort.Slice(entries, func(i, j int) bool { return entries[i].word < entries[j].word })
    \tfmt.Println("report")
    \tprintCounts(os.Stdout, entries, len(strings.Fields(text)))
    \tfmt.Println("done")
    }
    """
)


def test_the_call_passing_os_stdout_gets_a_flushed_buffer_and_prints_the_same(
    tmp_path: Path,
) -> None:
    found = proposal(COUNTS, "printCounts", RULE)
    assert found is not None and found.answer.kind == "search_replace"
    new = found.files["main.go"]
    assert "\tbufferedStdout := bufio.NewWriter(os.Stdout)\n" in new
    assert "\tprintCounts(bufferedStdout, entries, len(strings.Fields(text)))\n" in new
    assert '\tbufferedStdout.Flush()\n\tfmt.Println("done")\n' in new
    assert '\t"bufio"\n' in new
    # The hot function itself is untouched: the change is at its caller.
    assert subject_of(new, "printCounts").source == subject_of(COUNTS, "printCounts").source
    go_same_output(tmp_path, COUNTS, found)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ('\tio.WriteString(w, "end\\n")', '\tfmt.Fprintln(os.Stderr, "end")'),
            "names os.Stdout or os.Stderr itself",
        ),
        (
            ("\tbar(w, e.count)", "\tkeep = w\n\t\t_ = e"),
            "uses w other than by writing to it",
        ),
        (
            ("\tprintCounts(os.Stdout,", "\tprintCounts(io.Discard,"),
            "no call in main.go passes os.Stdout as w",
        ),
        (
            ("\tout.Write(", "\tfmt.Print(n)\n\tout.Write("),
            "may write output or end the process",
        ),
        (
            (
                "\tprintCounts(os.Stdout, entries, len(strings.Fields(text)))",
                "\tif printCounts(os.Stdout, entries, 0); true {\n\t}",
            ),
            "is not a statement of its own",
        ),
    ],
    ids=[
        "writes-to-stderr",
        "keeps-the-writer",
        "caller-passes-another-writer",
        "callee-prints",
        "if-statement",
    ],
)
def test_a_writer_that_could_show_the_buffering_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = COUNTS.replace(*change)
    if "keep = w" in text:
        text = text.replace("type entry struct", "var keep io.Writer\n\ntype entry struct")
    assert change[1] in text
    assert words in declined(subject_of(text, "printCounts"), RULE)


def test_without_its_file_the_writer_is_only_suspected() -> None:
    alone = subject_of(COUNTS, "printCounts", whole_file=False)
    (finding,) = [f for f in rules.findings(alone) if f.rule == RULE]
    assert not finding.certain and "fmt.Fprintf(w," in finding.evidence
