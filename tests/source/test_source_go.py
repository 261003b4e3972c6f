"""The Go reader on real Go files: logstat as shipped, and a small file with the shapes pprof
names in its own way (pointer and value receivers, a generic receiver, a closure, a broken
declaration)."""

from __future__ import annotations

from pathlib import Path

from speedproof.source.function import SourceFunction, split_lines
from speedproof.source.go import (
    function_alone,
    functions,
    import_specs,
    locate,
    package_name,
    parse,
    struct_fields,
)
from support.paths import EXAMPLES

TRICKY = """package main

import (
\tstr "strings"
\t"os"
)

type counter struct {
\tn    int
\tout  *os.File
\tseen map[string]bool
}

func (c *counter) add(word string) {
\tc.n++
\tkeep := func(w string) bool { return w != "" }
\tif keep(word) {
\t\tc.seen[str.ToLower(word)] = true
\t}
}

func (c counter) total() int { return c.n }

type List[T any] struct{ items []T }

func (l *List[T]) Len() int {
\treturn len(l.items)
}

func broken( {
}

func after() {}
"""


def test_logstat_methods_are_named_as_pprof_names_them_with_their_exact_lines() -> None:
    path = EXAMPLES / "logstat" / "stats.go"
    data = path.read_bytes()
    found = {f.name: f for f in functions(data, "stats.go", package_name(parse(data)))}
    add_line = found["main.(*stats).addLine"]
    lines = split_lines(data.decode())
    assert (add_line.start_line, add_line.end_line) == (79, 116)
    assert add_line.source == "".join(lines[78:116])
    assert add_line.source.startswith("func (st *stats) addLine(line string) {")
    assert (add_line.file, add_line.language, add_line.bare_name) == ("stats.go", "go", "addLine")
    assert "main.newStats" in found


def test_every_logstat_function_is_read_once_in_file_order() -> None:
    data = (EXAMPLES / "logstat" / "report.go").read_bytes()
    names = [f.name for f in functions(data, "report.go", "main")]
    assert names[:3] == ["main.writeReport", "main.writeStatus", "main.writeMethods"]
    assert len(names) == len(set(names))


def test_receivers_generics_and_closures_are_named_by_their_declaration(tmp_path: Path) -> None:
    found = functions(TRICKY.encode(), "tricky.go", "main")
    names = [f.name for f in found]
    assert names[:3] == ["main.(*counter).add", "main.counter.total", "main.(*List[...]).Len"]
    add = found[0]
    # The closure inside `add` is part of it, not a function of its own.
    assert (add.start_line, add.end_line) == (14, 20)
    assert "keep := func" in add.source
    assert found[1].source == "func (c counter) total() int { return c.n }\n"


def test_a_broken_declaration_leaves_the_ones_after_it_readable() -> None:
    names = [f.name for f in functions(TRICKY.encode(), "tricky.go", "main")]
    assert "main.after" in names


def test_imports_are_read_with_their_aliases() -> None:
    assert import_specs(parse(TRICKY.encode())) == [("strings", "str"), ("os", None)]


def test_a_struct_s_fields_are_read_with_their_written_types() -> None:
    fields = struct_fields(parse(TRICKY.encode()), "counter")
    assert fields == {"n": "int", "out": "*os.File", "seen": "map[string]bool"}


def test_a_method_is_found_in_its_file_by_name_and_by_span_when_names_repeat() -> None:
    text = TRICKY + "\nfunc (o other) add(word string) {}\n"
    root = parse(text.encode())
    first = SourceFunction("main.(*counter).add", "t.go", "go", "", 14, 20)
    second = SourceFunction("main.other.add", "t.go", "go", "", 35, 35)
    found = locate(root, first, whole_file=True)
    again = locate(root, second, whole_file=True)
    assert found is not None and found.start_point.row + 1 == 14
    assert again is not None and again.start_point.row + 1 == 35
    assert locate(root, first, whole_file=False) is None  # two of that name: which is unknown


def test_a_function_shown_alone_parses_behind_a_package_line() -> None:
    alone = function_alone("func (c counter) total() int { return c.n }\n")
    assert alone.function is not None
    assert alone.function.type == "method_declaration"
    assert not alone.tree.root_node.has_error
    assert function_alone("x := 1\n").function is None
