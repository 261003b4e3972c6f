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
FUNCTION_NODES = ("function_declaration", "method_declaration", "func_literal")
ASSIGNMENTS = ("short_var_declaration", "assignment_statement")
# In-memory writers: a Write method on a local of one of these types writes no stream.
MEMORY_TYPES = (("strings", "Builder"), ("bytes", "Buffer"))
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


def noisy_call(
    unit: GoUnit, call: Node, quiet: dict[str, bool], writes: frozenset[int] | set[int]
) -> bool:
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
        if name in BUILTINS or local_literal(unit, call, name):
            return False
        return not quiet_function(unit, name, quiet, writes)
    if function.type == "func_literal":
        return False
    parts = call_of(unit, call)
    if parts is None:
        return function.type != "parenthesized_expression"
    if in_memory(unit, call, parts[0]):
        return False
    return _noisy_selector(unit, *parts[:2])


def _left(holder: Node) -> Node | None:
    return holder.child_by_field_name("left")


def _enclosing(node: Node) -> Node | None:
    """The function declaration, method or function literal around `node`."""
    function = node.parent
    while function is not None and function.type not in FUNCTION_NODES:
        function = function.parent
    return function


def local_literal(unit: GoUnit, call: Node, name: str) -> bool:
    """`name` is a local of a function around `call` that only ever holds function literals
    (`next := func() rune {...}`, or `var dfs func(...)` then `dfs = func(...) {...}`): the
    literals' bodies are part of the function's own, so whoever checks it checks them."""
    function = _enclosing(call)
    while function is not None:
        values: list[str] = []
        for use in unit.uses(name, function):
            parent = use.parent
            holder = parent.parent if parent is not None else None
            if parent is not None and parent.type == "var_spec":
                kind = parent.child_by_field_name("type")
                has_value = parent.child_by_field_name("value") is not None
                values.append("?" if has_value or kind is None else kind.type)
            elif holder is not None and holder.type in ASSIGNMENTS and _left(holder) == parent:
                right = holder.child_by_field_name("right")
                kinds = [c.type for c in right.named_children] if right is not None else ["?"]
                values.append(kinds[0] if len(kinds) == 1 else "?")
        if values:
            return all(v in ("function_type", "func_literal") for v in values)
        function = _enclosing(function)
    return False


def in_memory(unit: GoUnit, call: Node, operand: str) -> bool:
    """`operand` is a variable of the function around `call` declared once, and never assigned
    again, as a strings.Builder or bytes.Buffer value (`var b bytes.Buffer`, `b := new(bytes.
    Buffer)`, `b := &strings.Builder{}`): its Write methods write to memory, never to a stream."""
    function = _enclosing(call)
    if function is None or not operand.isidentifier():
        return False
    kinds = {f"{unit.package_name(p) or p}.{t}" for p, t in MEMORY_TYPES}
    declared: list[str] = []
    for use in unit.uses(operand, function):
        parent = use.parent
        holder = parent.parent if parent is not None else None
        if parent is not None and parent.type == "var_spec":
            kind = parent.child_by_field_name("type")
            value = parent.child_by_field_name("value")
            declared.append(unit.text(kind) if kind is not None and value is None else "?")
        elif holder is not None and holder.type in ASSIGNMENTS and _left(holder) == parent:
            assigned = parent.named_children if parent is not None else []
            declared.append(_made(unit, holder, len(assigned)))
    return len(declared) == 1 and declared[0] in kinds


def _made(unit: GoUnit, holder: Node, names: int) -> str:
    """The type `x := new(T)`, `x := &T{}` or `x := T{}` makes, or "?"."""
    right = holder.child_by_field_name("right")
    if holder.type != "short_var_declaration" or right is None or names != 1:
        return "?"
    value = right.named_children[0] if len(right.named_children) == 1 else None
    text = unit.text(value) if value is not None else ""
    if text.startswith("new(") and text.endswith(")"):
        return text[4:-1]
    return text.lstrip("&").removesuffix("{}") if text.endswith("{}") else "?"


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


def quiet_function(
    unit: GoUnit, name: str, quiet: dict[str, bool], writes: frozenset[int] | set[int] = frozenset()
) -> bool:
    """A function or method of this file named `name` that writes nothing (recursively) but the
    calls in `writes`."""
    if name in quiet:
        return quiet[name]
    quiet[name] = False  # recursion assumes the worst until proven quiet
    bodies = unit.functions_named(name)
    if not unit.whole_file or not bodies:
        return False
    result = all(quiet_body(unit, body, quiet, writes) for body in bodies)
    quiet[name] = result
    return result


def quiet_body(
    unit: GoUnit,
    body: Node,
    quiet: dict[str, bool],
    writes: frozenset[int] | set[int] = frozenset(),
) -> bool:
    text = unit.text(body)
    if "os.Stdout" in text or "os.Stderr" in text:
        return False
    for node in unit.walk(body):
        if node.type in ("go_statement",):
            return False
        if node.type == "call_expression" and noisy_call(unit, node, quiet, writes):
            return False
    return True
