"""Whether Go code may write output or end the process: the checks the buffering rules share.

A buffered writer moves bytes later in time, so a rule that adds one must show that nothing
else writes in between (os.Stderr, the log package, print/println, io.Copy, any Write/Print/
Flush method on another value, which may be os.Stdout too), and that nothing ends the process
before the buffer is flushed (os.Exit, log.Fatal/Panic, syscall.Exit, runtime.Goexit). A called
function of this package must be visibly quiet: one defined in this file is checked
recursively; one defined elsewhere is unknown, so it counts as noisy.
"""

from __future__ import annotations

from tree_sitter import Node

from speedproof.agents.heuristic.go_facts import GoUnit, call_of

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


def noisy_call(unit: GoUnit, call: Node, quiet: dict[str, bool], writes: set[int]) -> bool:
    """Whether `call` may write output or end the process; calls starting at a byte offset in
    `writes` are the writes being buffered, and do not count."""
    if call.start_byte in writes:
        return False
    function = call.child_by_field_name("function")
    if function is None:
        return True
    if function.type == "identifier":
        name = unit.text(function)
        if name in ("print", "println"):
            return True
        return name not in BUILTINS and not quiet_function(unit, name, quiet)
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


def quiet_function(unit: GoUnit, name: str, quiet: dict[str, bool]) -> bool:
    """A function or method of this file named `name` that writes nothing (recursively)."""
    if name in quiet:
        return quiet[name]
    quiet[name] = False  # recursion assumes the worst until proven quiet
    bodies = unit.functions_named(name)
    if not unit.whole_file or not bodies:
        return False
    result = all(quiet_body(unit, body, quiet) for body in bodies)
    quiet[name] = result
    return result


def quiet_body(unit: GoUnit, body: Node, quiet: dict[str, bool]) -> bool:
    text = unit.text(body)
    if "os.Stdout" in text or "os.Stderr" in text:
        return False
    for node in unit.walk(body):
        if node.type in ("go_statement",):
            return False
        if node.type == "call_expression" and noisy_call(unit, node, quiet, set()):
            return False
    return True
