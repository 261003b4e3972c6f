"""Facts about one Go file that the rewrite rules rely on, read by `speedproof.source.go`.

A unit is the whole file when the role was given it, else the hot function alone behind a
`package` line. Edits are byte ranges of the parsed text, so everything the rules do not touch
keeps its exact bytes (comments, gofmt layout).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from tree_sitter import Node, Tree

from speedproof.agents.heuristic.subject import RewriteDeclined, Subject, unused_name
from speedproof.source.go import (
    WRAPPER,
    declarations,
    declared_name,
    import_specs,
    locate,
    parse,
    parse_tree,
    walk,
)

STRING_LITERALS = ("interpreted_string_literal", "raw_string_literal")
LOOP = "for_statement"
# Functions of package strings that compute a new string from their arguments alone, reading and
# writing no other state: a rule may recompute or move such a call freely, and its result is a
# string. (ToTitle is one too, and Map returns a string but runs the function it is given: each
# rule that knows them adds them itself.)
STRINGS_TO_STRING = (
    "ToLower",
    "ToUpper",
    "Title",
    "TrimSpace",
    "Trim",
    "TrimLeft",
    "TrimRight",
    "TrimPrefix",
    "TrimSuffix",
    "Replace",
    "ReplaceAll",
    "Repeat",
    "Join",
)


def parses_cleanly(text: str) -> bool:
    return not parse(text.encode("utf-8")).has_error


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of the unit's text with `text`."""

    start: int
    end: int
    text: str


@dataclass
class GoUnit:
    subject: Subject
    data: bytes
    tree: Tree
    function: Node
    whole_file: bool
    # The file's imports, read once: the rules ask for a package's name once per call they
    # check, and each reading walks the whole tree (13.5 s for a survey of report.go's 11
    # functions before this was kept, 0.3 s after).
    _imports: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)

    # -- text -------------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8")

    def line_start(self, offset: int) -> int:
        return self.data.rfind(b"\n", 0, offset) + 1

    def indent(self, node: Node) -> str:
        """The whitespace that starts the line `node` starts on."""
        start = self.line_start(node.start_byte)
        line = self.data[start : node.start_byte].decode("utf-8")
        return line[: len(line) - len(line.lstrip(" \t"))]

    def statement_line(self, node: Node) -> tuple[int, int] | None:
        """The byte range of the whole line(s) `node` occupies, newline included, when nothing
        else shares them."""
        start = self.line_start(node.start_byte)
        end = self.data.find(b"\n", node.end_byte)
        end = len(self.data) if end < 0 else end + 1
        before = self.data[start : node.start_byte].strip()
        after = self.data[node.end_byte : end].strip()
        return (start, end) if not before and not after else None

    # -- structure --------------------------------------------------------------------------

    def walk(self, node: Node | None = None) -> Iterator[Node]:
        return walk(node or self.function)

    def function_nodes(self, *types: str) -> list[Node]:
        return [n for n in self.walk() if n.type in types]

    def body(self) -> Node | None:
        return self.function.child_by_field_name("body")

    def in_loop(self, node: Node) -> bool:
        current = node.parent
        while current is not None and current != self.function:
            if current.type == LOOP:
                return True
            if current.type == "func_literal":
                return False
            current = current.parent
        return False

    def in_closure(self, node: Node) -> bool:
        """Whether `node` is inside a function literal of the function (which may run later)."""
        return self.enclosed_by(node, "func_literal")

    def enclosed_by(self, node: Node, kind: str) -> bool:
        """Whether a node of type `kind` inside the function holds `node`."""
        current = node.parent
        while current is not None and current != self.function:
            if current.type == kind:
                return True
            current = current.parent
        return False

    def inside(self, node: Node, container: Node) -> bool:
        return container.start_byte <= node.start_byte and node.end_byte <= container.end_byte

    def identifiers(self, node: Node | None = None) -> list[Node]:
        return [n for n in self.walk(node) if n.type == "identifier"]

    def uses(self, name: str, node: Node | None = None) -> list[Node]:
        return [n for n in self.identifiers(node) if self.text(n) == name]

    # -- package level ----------------------------------------------------------------------

    def imports(self) -> dict[str, str]:
        """Import path -> the name it is used by in this file."""
        if self._imports is None:
            self._imports = self._read_imports()
        return self._imports

    def _read_imports(self) -> dict[str, str]:
        specs = import_specs(self.tree.root_node)
        return {path: alias or path.rsplit("/", 1)[-1] for path, alias in specs}

    def package_name(self, path: str) -> str | None:
        """The name `path` is used by here; without the file, its last element is assumed."""
        if not self.whole_file:
            return path.rsplit("/", 1)[-1]
        return self.imports().get(path)

    def functions_named(self, name: str) -> list[Node]:
        """The file's function and method declarations named `name`, in order (methods of
        different types may share a name)."""
        return [node for node in declarations(self.tree.root_node) if declared_name(node) == name]

    def all_identifiers(self) -> set[str]:
        kinds = ("identifier", "type_identifier", "field_identifier", "package_identifier")
        return {self.text(n) for n in self.walk(self.tree.root_node) if n.type in kinds}

    def fresh(self, base: str, taken: set[str] | None = None) -> str:
        """`base`, or `base2`, `base3`, ...: the first identifier not used in the file."""
        return unused_name(base, self.all_identifiers() | (taken or set()), joiner="")

    def package_constant(self, name: str) -> str | None:
        """The literal of `const name = "..."` at package level in this file, if that is what
        the name is."""
        for declaration in self.tree.root_node.children:
            if declaration.type != "const_declaration":
                continue
            for spec in declaration.named_children:
                if spec.type != "const_spec":
                    continue
                names = [c for c in spec.children_by_field_name("name")]
                value = spec.child_by_field_name("value")
                if len(names) != 1 or self.text(names[0]) != name or value is None:
                    continue
                literals = [c for c in value.named_children if c.type in STRING_LITERALS]
                if len(value.named_children) == 1 and literals:
                    return self.text(literals[0])
        return None


def call_of(unit: GoUnit, node: Node) -> tuple[str, str, list[Node]] | None:
    """(package or receiver text, selector, arguments) of a call `a.b(args)`."""
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or arguments is None or function.type != "selector_expression":
        return None
    operand = function.child_by_field_name("operand")
    field = function.child_by_field_name("field")
    if operand is None or field is None:
        return None
    args = [c for c in arguments.named_children if c.type != "comment"]
    return unit.text(operand), unit.text(field), args


def statements_of(block: Node) -> list[Node]:
    """The statements of a block (tree-sitter-go wraps them in a statement_list)."""
    for child in block.named_children:
        if child.type == "statement_list":
            return [c for c in child.named_children if c.type != "comment"]
    return [c for c in block.named_children if c.type != "comment"]


def parse_unit(subject: Subject) -> GoUnit | None:
    whole_file = subject.file_text is not None
    data = (
        subject.file_text.encode("utf-8")
        if subject.file_text is not None
        else (WRAPPER + subject.source).encode("utf-8")
    )
    tree = parse_tree(data)
    function = locate(tree.root_node, subject, whole_file=whole_file)
    if function is None or function.has_error:
        return None
    return GoUnit(subject, data, tree, function, whole_file)


def apply_edits(data: bytes, edits: Sequence[Edit], offset: int = 0) -> bytes:
    """`data` with `edits` (byte offsets counted from `offset`) applied; edits must not
    overlap."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    out: list[bytes] = []
    position = offset
    for edit in ordered:
        if edit.start < position:
            raise RewriteDeclined("two edits overlap")
        out.append(data[position - offset : edit.start - offset])
        out.append(edit.text.encode("utf-8"))
        position = edit.end
    out.append(data[position - offset :])
    return b"".join(out)
