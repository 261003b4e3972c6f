"""go-bufio-stdout: writes to os.Stdout in a loop, buffered with a bufio.Writer.

os.Stdout is unbuffered: every fmt.Println is one write system call (a few microseconds). A
bufio.Writer collects 4 KiB per call, and a deferred Flush writes the rest when the function
returns, including by panic.

Buffering moves bytes later in time, so the rule declines whenever that could be seen:

* the function calls os.Exit, log.Fatal/Panic, syscall.Exit or runtime.Goexit (deferred calls
  would not run, or would run after other output), starts goroutines, or runs commands;
* anything in the function writes elsewhere: os.Stderr, the log package, print/println,
  io.Copy, or any Write/Print/Flush method on another value (it may be os.Stdout too);
* a called function of this package is not visibly quiet: one defined in this file must be
  quiet itself (checked recursively); one defined elsewhere is unknown, so the rule declines;
* a write's result is used (a write error would surface only at Flush).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import function_proposal
from speedproof.agents.heuristic.go_facts import FUNCTIONS, Edit, GoUnit, call_of
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-bufio-stdout"
PRINT = {"Print": "Fprint", "Printf": "Fprintf", "Println": "Fprintln"}
FPRINT = ("Fprint", "Fprintf", "Fprintln")
WRITER = "\x00writer\x00"  # stands for the buffer's name until it is chosen
BUILTINS = {
    "append",
    "cap",
    "clear",
    "close",
    "complex",
    "copy",
    "delete",
    "imag",
    "len",
    "make",
    "max",
    "min",
    "new",
    "panic",
    "real",
    "recover",
    "string",
    "int",
    "int64",
    "float64",
    "byte",
    "rune",
    "uint",
    "uint64",
    "int32",
    "uint32",
    "float32",
    "bool",
    "error",
}
NOISY_PACKAGES = {"log", "flag", "exec", "syscall", "testing"}
NOISY_METHODS = (
    "Write",
    "WriteString",
    "WriteByte",
    "WriteRune",
    "WriteTo",
    "Print",
    "Printf",
    "Println",
    "Flush",
    "Sync",
    "PrintDefaults",
    "Usage",
    "Exit",
    "Goexit",
)


@dataclass(frozen=True)
class _Write:
    call: Node
    replacement: str  # the call's text once it writes to the buffer, named WRITER here


def _writes(unit: GoUnit) -> list[_Write]:
    fmt = unit.package_name("fmt")
    os = unit.package_name("os") or "os"
    io = unit.package_name("io")
    stdout = f"{os}.Stdout"
    found = []
    for call in unit.function_nodes("call_expression"):
        parts = call_of(unit, call)
        if parts is None:
            continue
        operand, method, args = parts
        arguments = call.child_by_field_name("arguments")
        assert arguments is not None
        inner = unit.text(arguments)[1:-1]
        if operand == fmt and method in PRINT:
            separator = ", " if inner.strip() else ""
            found.append(_Write(call, f"{fmt}.{PRINT[method]}({WRITER}{separator}{inner})"))
        elif (
            args
            and unit.text(args[0]) == stdout
            and (
                (operand == fmt and method in FPRINT) or (operand == io and method == "WriteString")
            )
        ):
            rest = unit.text(arguments)[args[0].end_byte - arguments.start_byte : -1]
            found.append(_Write(call, f"{operand}.{method}({WRITER}{rest})"))
        elif operand == stdout and method in ("Write", "WriteString"):
            found.append(_Write(call, f"{WRITER}.{method}({inner})"))
    return found


def _noisy_call(unit: GoUnit, call: Node, quiet: dict[str, bool], writes: set[int]) -> bool:
    """Whether `call` may write output or end the process, other than the writes we buffer."""
    if call.start_byte in writes:
        return False
    function = call.child_by_field_name("function")
    if function is None:
        return True
    if function.type == "identifier":
        name = unit.text(function)
        if name in ("print", "println"):
            return True
        return name not in BUILTINS and not _quiet_function(unit, name, quiet)
    if function.type == "func_literal":
        return False
    parts = call_of(unit, call)
    if parts is None:
        return function.type != "parenthesized_expression"
    return _noisy_selector(unit, *parts[:2])


def _noisy_selector(unit: GoUnit, operand: str, method: str) -> bool:
    """Whether `operand.method(...)` may write output or end the process."""
    packages = {unit.package_name(p) or p: p for p in ("fmt", "os", "io", *NOISY_PACKAGES)}
    package = packages.get(operand)
    noisy_in_package = {
        "fmt": method.startswith(("Print", "Fprint")),
        "os": method == "Exit",
        "io": method in ("WriteString", "Copy", "CopyN", "CopyBuffer"),
    }
    if package in NOISY_PACKAGES:
        return True
    if package in noisy_in_package:
        return noisy_in_package[package]
    if operand.endswith((".Stdout", ".Stderr")):
        return True
    return method in NOISY_METHODS or method.startswith(("Print", "Write"))


def _quiet_function(unit: GoUnit, name: str, quiet: dict[str, bool]) -> bool:
    """A function or method of this file named `name` that writes nothing (recursively)."""
    if name in quiet:
        return quiet[name]
    quiet[name] = False  # recursion assumes the worst until proven quiet
    bodies = [
        node
        for node in unit.tree.root_node.children
        if node.type in FUNCTIONS
        and (n := node.child_by_field_name("name")) is not None
        and unit.text(n) == name
    ]
    if not unit.whole_file or not bodies:
        return False
    result = all(_quiet_body(unit, body, quiet) for body in bodies)
    quiet[name] = result
    return result


def _quiet_body(unit: GoUnit, body: Node, quiet: dict[str, bool]) -> bool:
    text = unit.text(body)
    if "os.Stdout" in text or "os.Stderr" in text:
        return False
    for node in unit.walk(body):
        if node.type in ("go_statement",):
            return False
        if node.type == "call_expression" and _noisy_call(unit, node, quiet, set()):
            return False
    return True


def _applicable(unit: GoUnit) -> list[_Write] | None:
    writes = _writes(unit)
    if not any(unit.in_loop(w.call) for w in writes):
        return None
    if any(w.call.parent is None or w.call.parent.type != "expression_statement" for w in writes):
        return None
    if unit.function_nodes("go_statement"):
        return None
    if "Stderr" in unit.text(unit.function):
        return None
    starts = {w.call.start_byte for w in writes}
    quiet: dict[str, bool] = {unit.subject.bare_name: True}
    for call in unit.function_nodes("call_expression"):
        if _noisy_call(unit, call, quiet, starts):
            return None
    return writes


def find(unit: GoUnit) -> Finding | None:
    writes = _applicable(unit)
    if writes is None:
        return None
    looped = next(w for w in writes if unit.in_loop(w.call))
    return Finding(
        rule=RULE,
        cause="unbuffered_io",
        evidence=(
            f"`{unit.text(looped.call)}` in {unit.subject.bare_name} makes one write system "
            "call to the unbuffered os.Stdout per loop iteration"
        ),
        certain=unit.whole_file,
    )


def propose(unit: GoUnit) -> Proposal | None:
    writes = _applicable(unit)
    body = unit.body()
    if writes is None or body is None or not unit.whole_file:
        return None
    finding = find(unit)
    assert finding is not None
    name = unit.fresh("bufferedStdout")
    os = unit.package_name("os") or "os"
    indent = unit.indent(unit.function) + "\t"
    bufio = unit.package_name("bufio") or "bufio"
    opening = f"\n{indent}{name} := {bufio}.NewWriter({os}.Stdout)\n{indent}defer {name}.Flush()"
    edits = [Edit(body.start_byte + 1, body.start_byte + 1, opening)]
    for write in writes:
        edits.append(
            Edit(
                write.call.start_byte, write.call.end_byte, write.replacement.replace(WRITER, name)
            )
        )
    hypothesis = (
        f"{unit.subject.bare_name} writes to the unbuffered os.Stdout once per loop iteration, "
        "one system call each; a bufio.Writer flushed when the function returns writes the "
        "same bytes in a few large writes."
    )
    return function_proposal(unit, finding, edits, hypothesis=hypothesis, imports=["bufio", "os"])
