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
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, call_of
from speedproof.agents.heuristic.go_quiet import noisy_call
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-bufio-stdout"
PRINT = {"Print": "Fprint", "Printf": "Fprintf", "Println": "Fprintln"}
FPRINT = ("Fprint", "Fprintf", "Fprintln")
WRITER = "\x00writer\x00"  # stands for the buffer's name until it is chosen


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
        if noisy_call(unit, call, quiet, starts):
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
