"""The structure of one Go function, read by `speedproof.source.go`: loops, calls, assignments,
conversions and literals, each with the loops around it and its line in the file.

The function is parsed alone behind a `package` line. When the whole file is known, the struct
its method receiver points to is read too, so `e.w.WriteByte(b)` can be told to reach a
`*bytes.Buffer` field rather than a file. A `for ... range R` evaluates R once, so R is not "in"
that loop; a three-clause loop's condition and update run every round, so they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from speedproof.advisor.errors import AdvisorError
from speedproof.advisor.sites import Call, Destination, Growth, IoSite, Loop, Site
from speedproof.advisor.subject import Subject
from speedproof.source.go import (
    WRAPPER_LINES,
    function_alone,
    import_specs,
    parse,
    struct_fields,
    walk,
)

STREAMS = {"os.Stdout": "real", "os.Stderr": "real", "os.Stdin": "real"}
STDOUT_CALLS = frozenset({"fmt.Print", "fmt.Printf", "fmt.Println"})
STDIN_CALLS = frozenset({"fmt.Scan", "fmt.Scanf", "fmt.Scanln"})
WRITER_FIRST = frozenset(
    {
        "fmt.Fprint",
        "fmt.Fprintf",
        "fmt.Fprintln",
        "fmt.Fscan",
        "fmt.Fscanf",
        "fmt.Fscanln",
        "io.WriteString",
        "io.Copy",
    }
)
IO_METHODS = frozenset(
    {
        "Write",
        "WriteString",
        "WriteByte",
        "WriteRune",
        "Read",
        "ReadString",
        "ReadByte",
        "ReadRune",
        "ReadLine",
        "ReadBytes",
        "Flush",
        "Sync",
    }
)
# Package names that a selector's operand may be; without the file's imports they cannot be
# told from a variable, so a method-like call on one is not taken for I/O.
PACKAGES = frozenset({"binary", "io", "os", "bufio", "fmt", "strings", "bytes", "utf8", "json"})
TYPE_DESTINATIONS: dict[str, Destination] = {
    "os.File": "real",
    "net.Conn": "real",
    "net.TCPConn": "real",
    "bytes.Buffer": "memory",
    "strings.Builder": "memory",
    "bufio.Writer": "buffered",
    "bufio.Reader": "buffered",
    "bufio.Scanner": "buffered",
    "bufio.ReadWriter": "buffered",
}
VALUE_PREFIXES: tuple[tuple[str, Destination], ...] = (
    ("os.Create(", "real"),
    ("os.Open(", "real"),
    ("os.OpenFile(", "real"),
    ("net.Dial(", "real"),
    ("bufio.New", "buffered"),
    ("bytes.NewBuffer", "memory"),
    ("new(bytes.Buffer)", "memory"),
    ("&bytes.Buffer{", "memory"),
    ("bytes.Buffer{", "memory"),
    ("new(strings.Builder)", "memory"),
    ("&strings.Builder{", "memory"),
    ("strings.Builder{", "memory"),
    ("os.Stdout", "real"),
    ("os.Stderr", "real"),
)


GoLoop = Loop[Node]
GoSite = Site[Node]


@dataclass(frozen=True)
class GoCall(Call[Node]):
    args: tuple[Node, ...] = ()


@dataclass(frozen=True)
class GoUpdate(Site[Node]):
    target: str = ""
    op: str = "="  # "+=" or "=" (for s = s + x)
    value: Node | None = None


@dataclass(frozen=True)
class Declared:
    """One declaration of a local name: its written type and/or its initial value."""

    type: str | None
    value: Node | None


@dataclass
class GoFacts:
    subject: Subject
    data: bytes
    function: Node
    params: dict[str, str] = field(default_factory=dict)
    receiver: tuple[str, str] | None = None  # (name, struct type name)
    fields: dict[str, str] = field(default_factory=dict)  # receiver struct field -> type
    declared: dict[str, list[Declared]] = field(default_factory=dict)
    loops: list[GoLoop] = field(default_factory=list)
    calls: list[GoCall] = field(default_factory=list)
    updates: list[GoUpdate] = field(default_factory=list)
    appends: list[GoUpdate] = field(default_factory=list)  # x = append(x, ...)
    stores: list[GoSite] = field(default_factory=list)  # m[k] = v, m[k]++, m[k] += v
    conversions: list[GoSite] = field(default_factory=list)  # []byte(s), string(b)
    literals: list[GoSite] = field(default_factory=list)  # composite literals
    imports: frozenset[str] = frozenset()

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, node: Node | None = None) -> Iterator[Node]:
        return walk(node or self.function)

    # ----- derived facts ------------------------------------------------------------------

    def type_of(self, name: str) -> str | None:
        """The written type of a parameter or a `var x T` local, when there is exactly one."""
        if name in self.params:
            return self.params[name]
        types = {d.type for d in self.declared.get(name, []) if d.type is not None}
        return types.pop() if len(types) == 1 else None

    def is_string(self, name: str) -> bool:
        if self.type_of(name) == "string":
            return True
        values = [d.value for d in self.declared.get(name, []) if d.value is not None]
        return bool(values) and all(
            v.type in ("interpreted_string_literal", "raw_string_literal") for v in values
        )

    def io_sites(self) -> list[IoSite]:
        return [site for call in self.calls if (site := self._io_site(call)) is not None]

    def growths(self) -> list[Growth]:
        found = [Growth(a.target, a.text, a.line) for a in self.appends if a.in_loop]
        found += [
            Growth(self.text(s.node).split("[", 1)[0], s.text, s.line)
            for s in self.stores
            if s.in_loop
        ]
        return found

    def assigned_within(self, loop: GoLoop) -> set[str]:
        names: set[str] = set()
        for node in self.walk(loop.node):
            if node.type in ("assignment_statement", "short_var_declaration", "range_clause"):
                left = node.child_by_field_name("left")
                if left is not None:
                    names.update(self._base_names(left))
            elif node.type in ("inc_statement", "dec_statement"):
                names.update(self._base_names(node))
        return names

    def invariant(self, node: Node, loop: GoLoop) -> bool:
        """True when no name `node` reads changes inside `loop` and it makes no call."""
        changed = self.assigned_within(loop)
        reads = {self.text(n) for n in self.walk(node) if n.type == "identifier"}
        calls = any(n.type == "call_expression" for n in self.walk(node))
        return not calls and not (reads & changed)

    def _base_names(self, node: Node) -> Iterator[str]:
        if node.type == "identifier":
            yield self.text(node)
            return
        if node.type in ("index_expression", "selector_expression"):
            operand = node.child_by_field_name("operand")
            if operand is not None:
                yield from self._base_names(operand)
            return
        for child in node.named_children:
            yield from self._base_names(child)

    # ----- where I/O goes -----------------------------------------------------------------

    def _io_site(self, call: GoCall) -> IoSite | None:
        if call.name in STDOUT_CALLS:
            return self._site(call, "os.Stdout", ("real", f"{call.name} writes to os.Stdout"))
        if call.name in STDIN_CALLS:
            return self._site(call, "os.Stdin", ("real", f"{call.name} reads os.Stdin"))
        if call.name in ("print", "println"):
            return self._site(call, "stderr", ("real", f"builtin {call.name} writes to stderr"))
        if call.name in WRITER_FIRST and call.args:
            return self._site(call, self.text(call.args[0]), self.destination(call.args[0]))
        if call.method in IO_METHODS and call.receiver:
            function = call.node.child_by_field_name("function")
            operand = function.child_by_field_name("operand") if function is not None else None
            if operand is None or self._is_package(operand):
                return None
            return self._site(call, call.receiver, self.destination(operand))
        return None

    def _is_package(self, node: Node) -> bool:
        if node.type != "identifier":
            return False
        name = self.text(node)
        if name in self.params or name in self.declared:
            return False
        if self.receiver is not None and name == self.receiver[0]:
            return False
        return name in self.imports or name in PACKAGES

    def _site(self, call: GoCall, target: str, found: tuple[Destination, str]) -> IoSite:
        return IoSite(call.text, target, found[0], found[1], call.in_loop, call.line)

    def destination(self, node: Node) -> tuple[Destination, str]:
        text = self.text(node)
        if text in STREAMS:
            return "real", f"{text} is a process stream"
        if node.type == "unary_expression" and text.startswith("&"):
            operand = node.child_by_field_name("operand")
            if operand is not None:
                return self.destination(operand)
        if node.type == "identifier":
            return self._name_destination(text)
        if node.type == "selector_expression" and self.receiver is not None:
            operand = node.child_by_field_name("operand")
            member = node.child_by_field_name("field")
            own = operand is not None and self.text(operand) == self.receiver[0]
            field_type = self.fields.get(self.text(member)) if member is not None else None
            if own and member is not None and field_type is not None:
                kind = type_destination(field_type)
                return kind, f"field {self.text(member)} of {self.receiver[1]} is {field_type}"
        return "unknown", f"the type of {text} is not visible in the function"

    def _name_destination(self, name: str) -> tuple[Destination, str]:
        written = self.type_of(name)
        if written is not None:
            return type_destination(written), f"{name} is {written}"
        for declared in self.declared.get(name, []):
            if declared.value is not None:
                value = self.text(declared.value)
                for prefix, kind in VALUE_PREFIXES:
                    if value.startswith(prefix):
                        return kind, f"{name} is {value[:40]}"
        return "unknown", f"the type of {name} is not visible in the function"


def type_destination(type_text: str) -> Destination:
    return TYPE_DESTINATIONS.get(type_text.lstrip("*").strip(), "unknown")


def constant(facts: GoFacts, node: Node) -> bool:
    if node.type in (
        "int_literal",
        "float_literal",
        "interpreted_string_literal",
        "raw_string_literal",
        "rune_literal",
        "true",
        "false",
        "nil",
    ):
        return True
    # An upper-case package-level name is usually a constant; a call or a local never is.
    return node.type == "identifier" and facts.text(node)[:1].isupper()


class _Reader:
    def __init__(self, facts: GoFacts, offset: int) -> None:
        self.facts = facts
        self.offset = offset

    def line(self, node: Node) -> int:
        return int(node.start_point.row) + self.offset

    def site(
        self, node: Node, loops: tuple[GoLoop, ...]
    ) -> tuple[Node, str, tuple[GoLoop, ...], int]:
        return node, self.facts.text(node), loops, self.line(node)

    def visit(self, node: Node, loops: tuple[GoLoop, ...]) -> None:
        if node.type == "for_statement":
            self._loop(node, loops)
            return
        self._record(node, loops)
        for child in node.children:
            self.visit(child, loops)

    def _loop(self, node: Node, loops: tuple[GoLoop, ...]) -> None:
        clause = next((c for c in node.named_children if c.type != "block"), None)
        kind, iterable, bounded, once = self._describe(clause)
        loop = GoLoop(node, kind, iterable, bounded, self.line(node), len(loops))
        self.facts.loops.append(loop)
        for part in once:
            self.visit(part, loops)
        inner = (*loops, loop)
        left = clause.child_by_field_name("left") if clause is not None else None
        if clause is not None and clause.type == "range_clause" and left is not None:
            for name in self.facts._base_names(left):
                self.facts.declared.setdefault(name, []).append(Declared(None, None))
        for child in node.children:
            parts = child.children if child == clause else [child]
            for part in parts:
                if all(part != o for o in once):
                    self.visit(part, inner)

    def _describe(self, clause: Node | None) -> tuple[str, str, bool, list[Node]]:
        """The loop's kind, what it iterates, whether it is bounded, and the parts of its
        clause evaluated once (a range expression, a three-clause initializer)."""
        if clause is None:
            return "forever", "", False, []
        if clause.type == "range_clause":
            right = clause.child_by_field_name("right")
            if right is None:
                return "range", "", False, []
            return "range", self.facts.text(right), constant(self.facts, right), [right]
        initializer = clause.child_by_field_name("initializer")
        once = [initializer] if initializer is not None else []
        return "clause", self.facts.text(clause), self._bounded(clause), once

    def _bounded(self, clause: Node) -> bool:
        condition = clause.child_by_field_name("condition")
        if condition is None or condition.type != "binary_expression":
            return False
        right = condition.child_by_field_name("right")
        return right is not None and constant(self.facts, right)

    def _record(self, node: Node, loops: tuple[GoLoop, ...]) -> None:
        kind = node.type
        if kind == "call_expression":
            self._call(node, loops)
        elif kind in ("assignment_statement", "short_var_declaration"):
            self._assignment(node, loops)
        elif kind == "var_spec":
            self._var_spec(node)
        elif kind in ("inc_statement", "dec_statement"):
            target = node.named_children[0] if node.named_children else None
            if target is not None and target.type == "index_expression":
                self.facts.stores.append(GoSite(*self.site(node, loops)))
        elif kind == "type_conversion_expression":
            self.facts.conversions.append(GoSite(*self.site(node, loops)))
        elif kind == "composite_literal":
            self.facts.literals.append(GoSite(*self.site(node, loops)))

    def _call(self, node: Node, loops: tuple[GoLoop, ...]) -> None:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args = tuple(arguments.named_children) if arguments is not None else ()
        name = self.facts.text(function) if function is not None and _is_path(function) else ""
        if name in ("string", "[]byte", "[]rune") and args:
            self.facts.conversions.append(GoSite(*self.site(node, loops)))
        self.facts.calls.append(GoCall(*self.site(node, loops), name, args))

    def _assignment(self, node: Node, loops: tuple[GoLoop, ...]) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        op = self.facts.text(operator) if operator is not None else ":="
        if left is None or right is None:
            return
        targets = left.named_children
        values = right.named_children
        for index, target in enumerate(targets):
            # `f, err := os.Create(p)`: one call gives every target; f is its first result.
            value = values[index] if len(values) == len(targets) else None
            if len(values) == 1 and index == 0:
                value = values[0]
            self._one(node, loops, target, op, value)

    def _one(
        self, node: Node, loops: tuple[GoLoop, ...], target: Node, op: str, value: Node | None
    ) -> None:
        facts = self.facts
        if target.type == "index_expression":
            facts.stores.append(GoSite(*self.site(node, loops)))
            return
        if target.type != "identifier":
            return
        name = facts.text(target)
        if op == ":=":
            facts.declared.setdefault(name, []).append(Declared(None, value))
        if op == "+=":
            facts.updates.append(GoUpdate(*self.site(node, loops), name, "+=", value))
        elif op == "=" and value is not None:
            self._reassign(node, loops, name, value)

    def _reassign(self, node: Node, loops: tuple[GoLoop, ...], name: str, value: Node) -> None:
        facts = self.facts
        if value.type == "call_expression":
            function = value.child_by_field_name("function")
            arguments = value.child_by_field_name("arguments")
            first = arguments.named_children[0] if arguments and arguments.named_children else None
            if (
                function is not None
                and facts.text(function) == "append"
                and first is not None
                and facts.text(first) == name
            ):
                facts.appends.append(GoUpdate(*self.site(node, loops), name, "=", value))
                return
        if value.type == "binary_expression" and self._leftmost(value) == name:
            facts.updates.append(
                GoUpdate(*self.site(node, loops), name, "=", value.child_by_field_name("right"))
            )

    def _leftmost(self, value: Node) -> str:
        """The name that starts a chain of `+`: `s` in `s + sep + part`."""
        current: Node | None = value
        while current is not None and current.type == "binary_expression":
            operator = current.child_by_field_name("operator")
            if operator is None or self.facts.text(operator) != "+":
                return ""
            current = current.child_by_field_name("left")
        return (
            self.facts.text(current) if current is not None and current.type == "identifier" else ""
        )

    def _var_spec(self, node: Node) -> None:
        written = node.child_by_field_name("type")
        value_list = node.child_by_field_name("value")
        names = [c for c in node.named_children if c.type == "identifier"]
        values = value_list.named_children if value_list is not None else []
        for index, name in enumerate(names):
            value = values[index] if index < len(values) else None
            declared = Declared(self.facts.text(written) if written else None, value)
            self.facts.declared.setdefault(self.facts.text(name), []).append(declared)


def _is_path(node: Node) -> bool:
    if node.type == "identifier":
        return True
    if node.type == "selector_expression":
        operand = node.child_by_field_name("operand")
        return operand is not None and _is_path(operand)
    return node.type in ("slice_type",)


def _parameters(facts: GoFacts, function: Node) -> None:
    params = function.child_by_field_name("parameters")
    for declaration in params.named_children if params is not None else []:
        written = declaration.child_by_field_name("type")
        for name in declaration.named_children:
            if name.type == "identifier" and written is not None:
                facts.params[facts.text(name)] = facts.text(written)
    receiver = function.child_by_field_name("receiver")
    if receiver is None:
        return
    for declaration in receiver.named_children:
        own = declaration.child_by_field_name("name")
        written = declaration.child_by_field_name("type")
        if own is not None and written is not None:
            type_name = facts.text(written).lstrip("*").split("[", 1)[0].strip()
            facts.receiver = (facts.text(own), type_name)


def _file_facts(facts: GoFacts, file_text: str) -> None:
    """Imports and the receiver struct's fields, from the whole file."""
    root = parse(file_text.encode("utf-8"))
    specs = import_specs(root)
    facts.imports = frozenset(alias or path.rsplit("/", 1)[-1] for path, alias in specs)
    if facts.receiver is not None:
        facts.fields.update(struct_fields(root, facts.receiver[1]))


def read_go(subject: Subject) -> GoFacts:
    """The facts of `subject`'s function, or an AdvisorError when it does not parse."""
    alone = function_alone(subject.source)
    function = alone.function
    if function is None or alone.tree.root_node.has_error:
        raise AdvisorError(f"{subject.name}: the Go function does not parse")
    facts = GoFacts(subject, alone.data, function)
    _parameters(facts, function)
    if subject.file_text is not None:
        _file_facts(facts, subject.file_text)
    body = function.child_by_field_name("body")
    if body is not None:
        _Reader(facts, subject.start_line - WRAPPER_LINES).visit(body, ())
    return facts
