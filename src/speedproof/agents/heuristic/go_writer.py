"""go-bufio-writer: a function that writes to an io.Writer in a loop, given os.Stdout by a caller,
is given a bufio.Writer there instead, flushed right after the call.

The hot function is the one doing the writes (`fmt.Fprintf(w, ...)` once per row), and its
caller, which is not hot, passes `os.Stdout`: every write is a write system call (a few
microseconds each; 10 000 rows cost 10 000 calls). At the call site

    bufferedStdout := bufio.NewWriter(os.Stdout)
    writeRows(bufferedStdout, rows)
    bufferedStdout.Flush()

the same bytes reach os.Stdout in 4 KiB writes, and all of them before the statement after the
call runs. Buffering moves bytes later in time, so the rule declines whenever that could be
seen (`go_quiet` holds the shared checks):

* the writer is used other than by being written to (`fmt.Fprint*(w, ...)`,
  `io.WriteString(w, ...)`, `w.Write(...)`, `w.WriteString(...)`) or handed on to a function of
  this file that passes the same checks: compared, type-asserted (a terminal check), stored,
  captured by a closure or reassigned, it could tell the buffer apart or outlive the flush;
* anything else the call runs may write output or end the process: os.Stdout or os.Stderr
  named directly, the log package, print/println, os.Exit, a goroutine, or a function defined
  outside this file (unknown, so assumed to);
* a write's result is used (a write error would surface only at the flush);
* the call is not a statement of its own (an `if err := f(os.Stdout); ...` would run its
  branch before the flush), or its caller starts goroutines, which may write meanwhile.

The writer a call site passes may be os.Stdout, a call with no arguments of another package's
function named `New...Stdout` (`colorable.NewColorableStdout()`, os.Stdout itself on Unix), or
a local declared once from either and never assigned again; the buffer wraps that same value.
A caller that passes on its own io.Writer parameter, and passes these checks with it, is
followed to its own callers, as many levels as the file has, and buffered there. A call through
a function value (`a := gron; a(r, w, opts)`), a writer from a struct field or a package
variable of another shape is not followed: what it holds is not known from the call.

A method is followed only through a receiver the caller declares with the method's type
(`t := &T{...}`, `var t T`), since another type may have a method of the same name. A run that
panics inside the call loses the buffered tail; such a run has already failed (exit status 2
and a stack trace), and the behaviour gate compares only runs that succeed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import file_proposal
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, call_of
from speedproof.agents.heuristic.go_quiet import noisy_call
from speedproof.agents.heuristic.subject import Finding, Proposal
from speedproof.source.go import FUNCTIONS

RULE = "go-bufio-writer"
FPRINT = ("Fprint", "Fprintf", "Fprintln")
METHODS = ("Write", "WriteString")
STATEMENTS = ("expression_statement", "short_var_declaration", "assignment_statement")


@dataclass(frozen=True)
class _Site:
    statement: Node
    argument: Node  # the os.Stdout argument


@dataclass(frozen=True)
class _Plan:
    writer: str
    sites: tuple[_Site, ...]


def _parameters(unit: GoUnit, function: Node) -> list[tuple[str, str]]:
    """(name, type text) of each parameter of `function`, in order."""
    found: list[tuple[str, str]] = []
    parameters = function.child_by_field_name("parameters")
    for declaration in parameters.named_children if parameters is not None else []:
        kind = declaration.child_by_field_name("type")
        names = declaration.children_by_field_name("name")
        text = unit.text(kind) if kind is not None else ""
        if declaration.type == "variadic_parameter_declaration":
            text = "..." + text
        found.extend((unit.text(name), text) for name in names or [declaration])
    return found


def _writer_parameter(unit: GoUnit, function: Node) -> tuple[int, str] | None:
    """(position, name) of the first io.Writer parameter of `function`."""
    io = unit.package_name("io") or "io"
    for position, (name, kind) in enumerate(_parameters(unit, function)):
        if kind == f"{io}.Writer" and name != "_":
            return position, name
    return None


def _function_named(unit: GoUnit, name: str) -> Node | None:
    found = unit.functions_named(name)
    return found[0] if len(found) == 1 else None


# -- the writes, in the function and in what it hands the writer to ---------------------------


@dataclass
class _Writes:
    """The calls of one body that write to (or hand on) its writer; or why it may not be
    buffered."""

    calls: list[Node]
    problem: str | None = None


def _use_of(unit: GoUnit, use: Node, writer: str, seen: set[str]) -> tuple[Node | None, str | None]:
    """(the write call `use` takes part in, None) or (None, why this use rules buffering out)."""
    parent = use.parent
    call = parent.parent if parent is not None else None
    shown = unit.text(call if call is not None else use).split("\n")[0]
    refused = f"`{shown}` uses {writer} other than by writing to it"
    if parent is None or call is None or call.type != "call_expression":
        return None, refused
    if unit.in_closure(use):
        return None, f"`{shown}` writes to {writer} from a function literal, which may run later"
    if parent.type == "selector_expression" and parent.child_by_field_name("operand") == use:
        field = parent.child_by_field_name("field")
        return (
            (call, None) if field is not None and unit.text(field) in METHODS else (None, refused)
        )
    if parent.type != "argument_list":
        return None, refused
    position = [c for c in parent.named_children if c.type != "comment"].index(use)
    if _is_write(unit, call, position):
        return call, None
    problem = _forward_problem(unit, call, position, seen)
    return (call, None) if problem is None else (None, problem or refused)


def _is_write(unit: GoUnit, call: Node, position: int) -> bool:
    parts = call_of(unit, call)
    if parts is None or position != 0:
        return False
    operand, method, _ = parts
    fmt, io = unit.package_name("fmt") or "fmt", unit.package_name("io") or "io"
    return (operand == fmt and method in FPRINT) or (operand == io and method == "WriteString")


def _forward_problem(unit: GoUnit, call: Node, position: int, seen: set[str]) -> str | None:
    """None when `call` hands the writer to a function of this file that only writes to it,
    at the position of that function's io.Writer parameter; else why not ("" when `call` is no
    such hand-over at all)."""
    function = call.child_by_field_name("function")
    if function is None or function.type != "identifier" or not unit.whole_file:
        return ""
    name = unit.text(function)
    callee = _function_named(unit, name)
    parameter = _writer_parameter(unit, callee) if callee is not None else None
    if callee is None or parameter is None or parameter[0] != position:
        return ""
    if name in seen:
        return None  # recursion: the function is being checked already
    problem = _writes(unit, callee, parameter[1], seen | {name}).problem
    return None if problem is None else f"{name}, given the writer: {problem}"


def _writes(unit: GoUnit, function: Node, writer: str, seen: set[str]) -> _Writes:
    body = function.child_by_field_name("body")
    if body is None:
        return _Writes([], "the function has no body")
    found = _Writes([])
    for use in unit.uses(writer, body):
        call, problem = _use_of(unit, use, writer, seen)
        if call is None:
            return _Writes([], problem)
        if call.parent is None or call.parent.type != "expression_statement":
            shown = unit.text(call).split("\n")[0]
            return _Writes([], f"`{shown}` is deferred or its result is used")
        found.calls.append(call)
    if found.problem is None:
        found.problem = _noise(unit, function, body, found.calls)
    return found


def _noise(unit: GoUnit, function: Node, body: Node, writes: list[Node]) -> str | None:
    """Why something other than the writes may write output or end the process, or None."""
    text = unit.text(body)
    if "Stdout" in text or "Stderr" in text:
        return f"{_name(unit, function)} names os.Stdout or os.Stderr itself"
    if any(node.type == "go_statement" for node in unit.walk(body)):
        return f"{_name(unit, function)} starts goroutines"
    starts = {call.start_byte for call in writes}
    quiet: dict[str, bool] = {_name(unit, function): True}
    for call in (n for n in unit.walk(body) if n.type == "call_expression"):
        if noisy_call(unit, call, quiet, starts):
            return f"`{unit.text(call).split(chr(10))[0]}` may write output or end the process"
    return None


def _name(unit: GoUnit, function: Node) -> str:
    name = function.child_by_field_name("name")
    return unit.text(name) if name is not None else "the function"


# -- the call sites ------------------------------------------------------------------------


def _sites(
    unit: GoUnit, callee: Node, position: int, seen: frozenset[int] = frozenset()
) -> tuple[list[_Site], list[str]]:
    """Calls of `callee` (the hot function, then each caller that hands its own writer on) that
    pass the process's stdout as its writer and can be buffered, and why each of the others
    cannot. A caller that passes its own io.Writer parameter, and only writes to it or hands it
    on, is followed up to its own callers."""
    sites: list[_Site] = []
    problems: list[str] = []
    for caller in unit.tree.root_node.children:
        if caller.type not in FUNCTIONS or caller == callee:
            continue
        for call in (n for n in unit.walk(caller) if n.type == "call_expression"):
            arguments = _arguments(call)
            if not _calls(unit, call, caller, callee) or len(arguments) <= position:
                continue
            argument = arguments[position]
            if not _is_stdout(unit, argument, caller):
                found, why = _handed_on(unit, caller, argument, seen | {callee.start_byte})
                sites.extend(found)
                problems.extend(why)
                continue
            problem = _site_problem(unit, call, caller)
            if problem is None:
                sites.append(_Site(_statement(call), argument))
            else:
                problems.append(problem)
    return sites, problems


def _handed_on(
    unit: GoUnit, caller: Node, argument: Node, seen: frozenset[int]
) -> tuple[list[_Site], list[str]]:
    """The sites above `caller` when `argument` is its own io.Writer parameter, which it only
    writes to or hands on; else nothing."""
    parameter = _writer_parameter(unit, caller)
    name = caller.child_by_field_name("name")
    if parameter is None or unit.text(argument) != parameter[1] or name is None:
        return [], []
    if caller.type != "function_declaration" or caller.start_byte in seen:
        return [], []
    problem = _writes(unit, caller, parameter[1], {unit.text(name)}).problem
    if problem is not None:
        return [], [f"{unit.text(name)}, which hands its writer on: {problem}"]
    return _sites(unit, caller, parameter[0], seen)


def _is_stdout(unit: GoUnit, argument: Node, caller: Node) -> bool:
    """`argument` is the process's stdout: `os.Stdout`, a call with no arguments of another
    package's function named for it (`colorable.NewColorableStdout()`, which returns os.Stdout
    itself on a terminal-less Unix and a writer around it elsewhere), or a local of the caller
    declared once from one of those and never assigned again."""
    if _stdout_value(unit, argument):
        return True
    if argument.type != "identifier":
        return False
    name = unit.text(argument)
    declared = [d for d in _declarations(unit, caller) if d[0] == name]
    assigned = [u for u in unit.uses(name, caller) if _assigned(u)]
    value = declared[0][2] if len(declared) == 1 else None
    return value is not None and not assigned and _stdout_value(unit, value)


def _stdout_value(unit: GoUnit, node: Node) -> bool:
    if unit.text(node) == f"{unit.package_name('os') or 'os'}.Stdout":
        return True
    parts = call_of(unit, node)
    packages = set(unit.imports().values())
    return (
        parts is not None
        and not parts[2]
        and parts[0] in packages
        and parts[1].startswith("New")
        and parts[1].endswith("Stdout")
    )


def _assigned(use: Node) -> bool:
    parent = use.parent
    holder = parent.parent if parent is not None else None
    return (
        holder is not None
        and holder.type == "assignment_statement"
        and holder.child_by_field_name("left") == parent
    )


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return [c for c in arguments.named_children if c.type != "comment"] if arguments else []


def _calls(unit: GoUnit, call: Node, caller: Node, callee: Node) -> bool:
    function = call.child_by_field_name("function")
    name_node = callee.child_by_field_name("name")
    name = unit.text(name_node) if name_node is not None else ""
    if function is None:
        return False
    if callee.type == "function_declaration":
        return function.type == "identifier" and unit.text(function) == name
    field = function.child_by_field_name("field")
    operand = function.child_by_field_name("operand")
    if function.type != "selector_expression" or field is None or operand is None:
        return False
    return unit.text(field) == name and _declared_as_receiver(unit, unit.text(operand), caller)


def _declared_as_receiver(unit: GoUnit, variable: str, caller: Node) -> bool:
    """`variable` is declared once in `caller`, as a value of the hot method's receiver type:
    `v := T{...}`, `v := &T{...}` or `var v T` / `var v *T` (with no value or such a value)."""
    receiver = unit.function.child_by_field_name("receiver")
    kind = unit.text(receiver).strip("()").split()[-1].lstrip("*") if receiver else ""
    declared = [d for d in _declarations(unit, caller) if d[0] == variable]
    if len(declared) != 1:
        return False
    _, kind_text, value = declared[0]
    if value is not None:
        literal = value.named_children[-1] if value.type == "unary_expression" else value
        typed = literal.child_by_field_name("type") if literal.type == "composite_literal" else None
        return typed is not None and unit.text(typed) == kind
    return kind_text.lstrip("*") == kind


def _declarations(unit: GoUnit, caller: Node) -> list[tuple[str, str, Node | None]]:
    """(name, declared type text, value) for each single-name declaration in `caller`; a name
    declared together with others is listed with an empty type and no value."""
    found: list[tuple[str, str, Node | None]] = []
    for node in unit.walk(caller):
        if node.type == "short_var_declaration":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            names = left.named_children if left is not None else []
            values = right.named_children if right is not None else []
            single = len(names) == 1 and len(values) == 1
            found.extend((unit.text(n), "", values[0] if single else None) for n in names)
        elif node.type == "var_spec":
            kind = node.child_by_field_name("type")
            value = node.child_by_field_name("value")
            values = value.named_children if value is not None else []
            found.extend(
                (
                    unit.text(n),
                    unit.text(kind) if kind is not None else "",
                    values[0] if values else None,
                )
                for n in node.children_by_field_name("name")
            )
    return found


def _statement(call: Node) -> Node:
    parent = call.parent
    if parent is not None and parent.type == "expression_list":
        parent = parent.parent
    assert parent is not None
    return parent


def _site_problem(unit: GoUnit, call: Node, caller: Node) -> str | None:
    statement = _statement(call)
    shown = unit.text(call).split("\n")[0]
    holder = statement.parent
    if statement.type not in STATEMENTS or holder is None or holder.type != "statement_list":
        return f"`{shown}` is not a statement of its own, so a flush cannot follow it directly"
    if statement.type != "expression_statement":
        right = statement.child_by_field_name("right")
        if right is None or len(right.named_children) != 1:
            return f"`{unit.text(statement)}` assigns more than the call's results"
    if any(node.type == "go_statement" for node in unit.walk(caller)):
        return f"{_name(unit, caller)} starts goroutines, which may write while the buffer fills"
    if unit.statement_line(statement) is None:
        return f"`{shown}` shares its line with other code"
    return None


# -- the rule ------------------------------------------------------------------------------


def _plan(unit: GoUnit) -> _Plan | str:
    parameter = _writer_parameter(unit, unit.function)
    if parameter is None:
        return f"{unit.subject.bare_name} has no io.Writer parameter"
    position, writer = parameter
    writes = _writes(unit, unit.function, writer, {unit.subject.bare_name})
    if writes.problem is not None:
        return writes.problem
    if not any(unit.in_loop(call) for call in writes.calls):
        return f"{unit.subject.bare_name} writes to {writer} only outside loops"
    if not unit.whole_file:
        return "the callers are not shown without the whole file"
    sites, problems = _sites(unit, unit.function, position)
    if not sites and problems:
        return problems[0]
    if not sites:
        return (
            f"no call in {unit.subject.file} passes os.Stdout as {writer} (a caller in another "
            "file, a call through a function value, or another writer, is not followed)"
        )
    return _Plan(writer, tuple(sites))


def _looped_write(unit: GoUnit) -> Node | None:
    """The first write to the io.Writer parameter inside a loop, seen in the function alone."""
    parameter = _writer_parameter(unit, unit.function)
    if parameter is None:
        return None
    for use in unit.uses(parameter[1]):
        call, _ = _use_of(unit, use, parameter[1], {unit.subject.bare_name})
        if call is not None and unit.in_loop(call):
            return call
    return None


def find(unit: GoUnit) -> Finding | None:
    looped = _looped_write(unit)
    if looped is None:
        return None
    return Finding(
        rule=RULE,
        cause="unbuffered_io",
        evidence=(
            f"`{unit.text(looped).split(chr(10))[0]}` in {unit.subject.bare_name} writes to an "
            "io.Writer once per loop iteration: one system call each when a caller passes "
            "os.Stdout"
        ),
        certain=isinstance(_plan(unit), _Plan),
    )


def explain(unit: GoUnit) -> str | None:
    if _writer_parameter(unit, unit.function) is None:
        return None  # no io.Writer parameter: the generic "not found" says so
    plan = _plan(unit)
    return plan if isinstance(plan, str) else None


def propose(unit: GoUnit) -> Proposal | None:
    plan = _plan(unit)
    finding = find(unit)
    if isinstance(plan, str) or finding is None:
        return None
    bufio = unit.package_name("bufio") or "bufio"
    edits: list[Edit] = []
    taken: set[str] = set()
    for site in plan.sites:
        name = unit.fresh("bufferedStdout", taken)
        taken.add(name)
        indent = unit.indent(site.statement)
        start = unit.line_start(site.statement.start_byte)
        stdout = unit.text(site.argument)
        opening = f"{indent}{name} := {bufio}.NewWriter({stdout})\n"
        edits.append(Edit(start, start, opening))
        edits.append(Edit(site.argument.start_byte, site.argument.end_byte, name))
        end = site.statement.end_byte
        edits.append(Edit(end, end, f"\n{indent}{name}.Flush()"))
    hypothesis = (
        f"{unit.subject.bare_name} writes to its io.Writer {plan.writer} once per loop "
        "iteration and its caller passes the unbuffered os.Stdout, one system call per write; "
        "a bufio.Writer at the call site, flushed right after the call, writes the same bytes "
        "in a few large writes."
    )
    return file_proposal(unit, finding, edits, hypothesis=hypothesis, imports=["bufio"])
