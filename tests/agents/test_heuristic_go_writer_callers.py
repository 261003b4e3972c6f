"""go-bufio-writer follows the writer up through callers and from a writer value, the shape of
gron's `main`: `out := colorable.NewColorableStdout()` (here a package of the module with the
same function) is handed to `render`, which writes a header and hands it on to the hot `emit`.
The buffer goes where the value is passed in main, flushed right after that call, and the
program built and run with the real Go toolchain prints exactly what it printed before."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from support.heuristic import declined
from support.heuristic_go import go_run, proposal, rewritten, subject_of

RULE = "go-bufio-writer"

TERM = {
    "term/term.go": textwrap.dedent(
        """\
        package term

        import (
        \t"io"
        \t"os"
        )

        // NewColorableStdout is os.Stdout on Unix, as go-colorable's is.
        func NewColorableStdout() io.Writer { return os.Stdout }
        """
    )
}

PROGRAM = textwrap.dedent(
    """\
    package main

    import (
    \t"fmt"
    \t"io"
    \t"strings"

    \t"prog/term"
    )

    func emit(w io.Writer, words []string) {
    \tfor i, word := range words {
    \t\tfmt.Fprintf(w, "%d %s\\n", i, word)
    \t}
    }

    func render(w io.Writer, text string) {
    \tfmt.Fprintln(w, "header")
    \temit(w, strings.Fields(text))
    }

    func main() {
    \tout := term.NewColorableStdout()
    \ttext := strings.Repeat("alpha beta gamma ", 500)
    \trender(out, text)
    \tfmt.Println("done")
    }
    """
)


def _same_output(tmp_path: Path, text: str, new: str) -> None:
    before = go_run(tmp_path / "before", text, TERM)
    after = go_run(tmp_path / "after", new, TERM)
    assert before.returncode == 0, before.stderr
    assert (after.returncode, after.stdout) == (0, before.stdout), after.stderr


def test_a_writer_value_handed_through_a_caller_is_buffered_where_main_passes_it(
    tmp_path: Path,
) -> None:
    found = proposal(PROGRAM, "emit", RULE)
    assert found is not None
    new = rewritten(tmp_path / "edit", PROGRAM, found)
    assert "\tbufferedStdout := bufio.NewWriter(out)\n\trender(bufferedStdout, text)\n" in new
    assert '\tbufferedStdout.Flush()\n\tfmt.Println("done")\n' in new
    assert subject_of(new, "render").source == subject_of(PROGRAM, "render").source
    _same_output(tmp_path, PROGRAM, new)


def test_a_stdout_constructor_passed_directly_is_wrapped_where_it_is_called(
    tmp_path: Path,
) -> None:
    text = PROGRAM.replace("\tout := term.NewColorableStdout()\n", "").replace(
        "render(out, text)", "render(term.NewColorableStdout(), text)"
    )
    found = proposal(text, "emit", RULE)
    assert found is not None
    new = rewritten(tmp_path / "edit", text, found)
    assert "\tbufferedStdout := bufio.NewWriter(term.NewColorableStdout())\n" in new
    _same_output(tmp_path, text, new)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ("\trender(out, text)\n", "\tout = io.Discard\n\trender(out, text)\n"),
            "no call in main.go passes os.Stdout as w",
        ),
        (
            ('\tfmt.Fprintln(w, "header")\n', '\tfmt.Println("header")\n'),
            'render, which hands its writer on: `fmt.Println("header")` may write output',
        ),
        (
            ("\trender(out, text)\n", "\tshow := render\n\tshow(out, text)\n"),
            "a call through a function value",
        ),
    ],
    ids=["value-reassigned", "caller-prints", "function-value"],
)
def test_a_writer_handed_on_where_buffering_could_show_is_declined_with_its_reason(
    change: tuple[str, str], words: str
) -> None:
    text = PROGRAM.replace(*change)
    assert change[1] in text
    assert words in declined(subject_of(text, "emit"), RULE)
