"""The target's Go source read with tree-sitter-go, through the one parser in `go_syntax`.

A function is a top-level `func` or method declaration; its name is written the way pprof writes
it: `main.parseLine`, `main.(*stats).addLine`, `main.List[...].Len`, and
`example.com/tool/internal/scan.Tokens` for a package other than main. A function shown alone
(without its file) is read behind `WRAPPER`, a `package` line, so it parses as a file does.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from speedproof.go_syntax import go_parser
from speedproof.go_syntax import parse as parse  # every Go reader parses through here
from speedproof.go_syntax import walk as walk
from speedproof.source.function import SourceFunction, lines_of

FUNCTIONS = ("function_declaration", "method_declaration")
WRAPPER = "package p\n\n"
WRAPPER_LINES = WRAPPER.count("\n")


def parse_tree(data: bytes) -> Tree:
    """The whole syntax tree (its root is `parse(data)`); tree-sitter reads broken sources too."""
    return go_parser().parse(data)


def text(node: Node | None) -> str:
    return "" if node is None or node.text is None else node.text.decode("utf-8", "replace")


def descendants(node: Node, kind: str) -> list[Node]:
    return [n for n in walk(node) if n.type == kind]


def package_name(root: Node) -> str:
    for child in root.children:
        if child.type == "package_clause":
            return next((text(c) for c in child.children if c.type == "package_identifier"), "")
    return ""


def declarations(root: Node) -> list[Node]:
    """The file's top-level function and method declarations, in file order."""
    return [node for node in root.children if node.type in FUNCTIONS]


def declared_name(node: Node) -> str:
    """The bare name a declaration declares (`addLine` for `func (s *stats) addLine()`)."""
    return text(node.child_by_field_name("name"))


def _receiver(node: Node) -> str:
    """`(*T)` or `T` as pprof prints a method's receiver; type arguments become `[...]`."""
    receiver = node.child_by_field_name("receiver")
    declaration = next(
        (c for c in (receiver.children if receiver else []) if c.type == "parameter_declaration"),
        None,
    )
    kind = declaration.child_by_field_name("type") if declaration else None
    pointer = kind is not None and kind.type == "pointer_type"
    if pointer and kind is not None:
        kind = next((c for c in kind.children if c.type != "*"), None)
    if kind is not None and kind.type == "generic_type":
        name = text(kind.child_by_field_name("type")) + "[...]"
    else:
        name = text(kind)
    return f"(*{name})" if pointer else name


def qualified_name(node: Node, package: str) -> str:
    if node.type == "method_declaration":
        return f"{package}.{_receiver(node)}.{declared_name(node)}"
    return f"{package}.{declared_name(node)}"


def functions(source: bytes, relative: str, package: str) -> list[SourceFunction]:
    """Top-level functions and methods of one file; `package` prefixes their names."""
    whole = source.decode(errors="replace")
    found = []
    for node in declarations(parse(source)):
        start, end = node.start_point.row + 1, node.end_point.row + 1
        name = qualified_name(node, package)
        found.append(SourceFunction(name, relative, "go", lines_of(whole, start, end), start, end))
    return found


def import_specs(root: Node) -> list[tuple[str, str | None]]:
    """Each import of a file: its path, and the alias written before it (None without one)."""
    found: list[tuple[str, str | None]] = []
    for spec in descendants(root, "import_spec"):
        path = spec.child_by_field_name("path")
        if path is None:
            continue
        alias = spec.child_by_field_name("name")
        found.append((text(path).strip('"`'), None if alias is None else text(alias)))
    return found


def locate(root: Node, function: SourceFunction, *, whole_file: bool) -> Node | None:
    """The declaration of `function` in a parsed file: the only one of its bare name, or, where
    methods of several types share the name in the whole file, the one starting in its span."""
    named = [node for node in declarations(root) if declared_name(node) == function.bare_name]
    if len(named) <= 1 or not whole_file:
        return named[0] if len(named) == 1 else None
    for node in named:
        if function.start_line <= node.start_point.row + 1 <= function.end_line:
            return node
    return None


@dataclass(frozen=True)
class Alone:
    """A function's text parsed alone behind `WRAPPER`: the bytes parsed, the tree and the first
    declaration in it (None when there is none)."""

    data: bytes
    tree: Tree
    function: Node | None


def function_alone(source: str) -> Alone:
    data = (WRAPPER + source).encode("utf-8")
    tree = parse_tree(data)
    return Alone(data, tree, next(iter(declarations(tree.root_node)), None))


def struct_fields(root: Node, type_name: str) -> dict[str, str]:
    """Field name -> written type of the struct type `type_name` declared in the file."""
    fields: dict[str, str] = {}
    for spec in descendants(root, "type_spec"):
        body = spec.child_by_field_name("type")
        if text(spec.child_by_field_name("name")) != type_name or body is None:
            continue
        if body.type != "struct_type":
            continue
        for child in body.named_children:
            for declaration in child.named_children:
                written = declaration.child_by_field_name("type")
                if declaration.type != "field_declaration" or written is None:
                    continue
                for part in declaration.named_children:
                    if part.type == "field_identifier":
                        fields[text(part)] = text(written)
    return fields
