"""Code overrules the advisor where it knows more, and records why."""

from __future__ import annotations

from speedproof.advisor.subject import Subject
from speedproof.advisor.vetoes import vetoes_for

ENCODER_FILE = """package json

import "bytes"

type encoder struct {
\tw   *bytes.Buffer
\tbuf [64]byte
}

func (e *encoder) writeByte(b byte) {
\te.w.WriteByte(b)
}
"""
WRITE_BYTE = "func (e *encoder) writeByte(b byte) {\n\te.w.WriteByte(b)\n}\n"


def test_a_write_to_a_bytes_buffer_field_vetoes_an_unbuffered_io_flag() -> None:
    subject = Subject.of("go", "json.(*encoder).writeByte", WRITE_BYTE, file_text=ENCODER_FILE)
    reason = vetoes_for(subject)["unbuffered_io"]
    assert "memory or an already-buffered stream" in reason
    assert "field w of encoder is *bytes.Buffer" in reason


def test_without_the_file_the_field_type_is_unknown_and_nothing_is_vetoed() -> None:
    subject = Subject.of("go", "json.(*encoder).writeByte", WRITE_BYTE)
    assert "unbuffered_io" not in vetoes_for(subject)


def test_a_write_to_os_stdout_keeps_the_flag() -> None:
    source = (
        "func f(xs []string) {\n\tfor _, x := range xs {\n\t\tos.Stdout.WriteString(x)\n\t}\n}\n"
    )
    assert "unbuffered_io" not in vetoes_for(Subject.of("go", "main.f", source))


def test_writes_through_a_bufio_writer_veto_the_flag() -> None:
    source = (
        "func f(xs []string) {\n\tw := bufio.NewWriter(os.Stdout)\n\tdefer w.Flush()\n"
        "\tfor _, x := range xs {\n\t\tfmt.Fprintln(w, x)\n\t}\n}\n"
    )
    assert "already-buffered" in vetoes_for(Subject.of("go", "main.f", source))["unbuffered_io"]


def test_a_python_method_writing_to_its_stringio_is_vetoed() -> None:
    file_text = (
        "import io\n\n\nclass Renderer:\n    def __init__(self):\n"
        "        self.out = io.StringIO()\n"
        "\n    def cell(self, value):\n        self.out.write(str(value))\n"
    )
    source = "    def cell(self, value):\n        self.out.write(str(value))\n"
    subject = Subject.of("python", "render.Renderer.cell", source, file_text=file_text)
    assert "self.out is an in-memory io.StringIO()" in vetoes_for(subject)["unbuffered_io"]


def test_print_to_stdout_keeps_the_flag_and_a_function_without_io_loses_it() -> None:
    printing = Subject.of("python", "m.f", "def f(xs):\n    for x in xs:\n        print(x)\n")
    silent = Subject.of("python", "m.g", "def g(xs):\n    return [x + 1 for x in xs]\n")
    assert "unbuffered_io" not in vetoes_for(printing)
    assert vetoes_for(silent)["unbuffered_io"] == "the function reads and writes no file or stream"


def test_preallocation_needs_a_collection_that_grows_in_a_loop() -> None:
    growing = Subject.of(
        "go",
        "main.f",
        "func f(xs []int) []int {\n\tvar out []int\n\tfor _, x := range xs {\n"
        "\t\tout = append(out, x)\n\t}\n\treturn out\n}\n",
    )
    fixed = Subject.of("go", "main.g", "func g(n int) []int {\n\treturn make([]int, n)\n}\n")
    counting = Subject.of(
        "python",
        "m.h",
        "def h(words):\n    counts = {}\n    for w in words:\n"
        "        counts[w] = counts.get(w, 0) + 1\n"
        "    return counts\n",
    )
    assert "preallocation" not in vetoes_for(growing)
    assert "preallocation" not in vetoes_for(counting)
    assert vetoes_for(fixed)["preallocation"] == "no collection grows inside a loop"
