"""Go constructs a candidate may not add, read with tree-sitter-go (docs/adr/0060).

- harness-probe: code that asks whether `go test` runs it. An import of "testing" in a file
  that is not a test (`testing.Testing()` needs it), any use of the `testing` package; a string
  that only a test binary's name or flags would match (`".test"` as in
  `strings.HasSuffix(os.Args[0], ".test")` or `filepath.Ext(os.Args[0]) == ".test"`,
  `"test.v"` as in `flag.Lookup("test.v")`, `"-test."`, `"go-build"`, the folder test binaries
  run from); and the call stack (`runtime.Caller`, `runtime.Callers`, `runtime.Stack`,
  `debug.Stack`), where a test's file name shows. A heuristic: a string assembled at run time
  or spelled with escapes (`"\x2etest"`) is out of its reach.
- code-as-data: an import of "plugin", which loads compiled code at run time. `unsafe`, cgo and
  `//go:linkname` are out of its scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from speedproof.go_syntax import parse, walk
from speedproof.judge.guard.finding import CodeRule, Finding, quote

STRINGS = ("interpreted_string_literal", "raw_string_literal")
IMPORTS: dict[str, CodeRule] = {"testing": "harness-probe", "plugin": "code-as-data"}
# A test binary is `<package>.test`, run from a `go-build…` folder with `-test.*` flags.
_TEST_BINARY_TEXT = re.compile(r"^-{0,2}test\.|\.test$|go-build|_test\.go")
STACK_CALLS = frozenset(
    {
        ("runtime", "Caller"),
        ("runtime", "Callers"),
        ("runtime", "CallersFrames"),
        ("runtime", "Stack"),
        ("debug", "Stack"),
        ("debug", "PrintStack"),
    }
)


def go_findings(text: str) -> list[Finding]:
    """Every construct of the kinds above in the Go source `text`."""
    data = text.encode("utf-8")
    lines = text.splitlines()
    found: list[Finding] = []
    for node in walk(parse(data)):
        for rule in _rules(node):
            line = node.start_point[0] + 1
            said = lines[line - 1] if line <= len(lines) else ""
            found.append(Finding(rule, line, node.end_point[0] + 1, quote(said)))
    return found


def _string_value(node: Node) -> str:
    raw = (node.text or b"").decode("utf-8", errors="replace")
    return raw[1:-1] if len(raw) >= 2 else raw


def _rules(node: Node) -> Iterator[CodeRule]:
    if node.type == "import_spec":
        path = node.child_by_field_name("path")
        rule = IMPORTS.get(_string_value(path)) if path is not None else None
        if rule is not None:
            yield rule
    elif node.type in STRINGS:
        inside_import = node.parent is not None and node.parent.type == "import_spec"
        if not inside_import and _TEST_BINARY_TEXT.search(_string_value(node)):
            yield "harness-probe"
    elif node.type == "selector_expression":
        operand = node.child_by_field_name("operand")
        field = node.child_by_field_name("field")
        if operand is None or field is None or operand.type != "identifier":
            return
        pair = ((operand.text or b"").decode(), (field.text or b"").decode())
        if pair[0] == "testing" or pair in STACK_CALLS:
            yield "harness-probe"
