"""Whole-function answers for Go, spliced by byte range with tree-sitter-go.

A function or method is found by the names a profile or a model uses for it (`Name`,
`main.Name`, `(*T).Name`, `T.Name`, `main.(*T).Name`, with any module path before the package
dropped). Its byte range is replaced by the new declaration; when the new text starts with a doc
comment, that comment replaces the old one, otherwise the old one stays. A preamble goes before
the doc comment, missing imports go into the import block (a single `import "x"` becomes a
block), and the resulting file must parse without ERROR or MISSING nodes. Everything else in the
file stays byte-identical; gofmt is not run, because it could touch lines the answer never did.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.edits.files import TargetFile, TargetFiles
from speedproof.agents.edits.result import EditRejected
from speedproof.go_syntax import parse
from speedproof.judge.guard.patch_text import normalise_patch

DECLARATIONS = ("function_declaration", "method_declaration")

# A fragment (new function, preamble) is parsed after this line, so its own line numbers are
# the parsed ones minus FRAGMENT_LINES.
FRAGMENT_PREFIX = b"package p\n\n"
FRAGMENT_LINES = 2

# Import paths as `go` accepts them, quoted or not: letters, digits and `_ . - / ~ +`.
_IMPORT_PATH = re.compile(r"^[A-Za-z0-9_.\-/~+]+$")


@dataclass(frozen=True)
class GoFunction:
    """A top-level declaration: name, receiver type (methods), and its byte ranges."""

    name: str
    receiver: str | None
    doc_start: int  # start of the doc comment directly above, or of the declaration
    start: int
    end: int

    def spellings(self, package: str) -> tuple[frozenset[str], frozenset[str]]:
        """(names that identify it exactly, names that identify it only if unique)."""
        if self.receiver is None:
            return frozenset({self.name, f"{package}.{self.name}"}), frozenset()
        forms = {f"{t}.{self.name}" for t in (self.receiver, f"({self.receiver})")}
        forms.add(f"(*{self.receiver}).{self.name}")
        return frozenset(forms | {f"{package}.{f}" for f in forms}), frozenset({self.name})


@dataclass(frozen=True)
class Located:
    file: TargetFile
    data: bytes
    package: str
    function: GoFunction


def declarations(root: Node) -> tuple[str, list[GoFunction]]:
    """The package name and every top-level function and method, in file order."""
    package = ""
    found: list[GoFunction] = []
    for node in root.children:
        if node.type == "package_clause":
            package = next((_text(c) for c in node.children if c.type == "package_identifier"), "")
        elif node.type in DECLARATIONS and (name := node.child_by_field_name("name")):
            start, end = node.start_byte, node.end_byte
            found.append(
                GoFunction(_text(name), _receiver_type(node), _doc_start(node), start, end)
            )
    return package, found


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8")


def _receiver_type(node: Node) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = list(receiver.children)
    while stack:
        child = stack.pop(0)
        if child.type == "type_identifier":
            return _text(child)
        stack[:0] = child.children
    return ""


def _doc_start(node: Node) -> int:
    """The first byte of the run of comment lines that ends on the line above `node`."""
    start, row = node.start_byte, node.start_point.row
    previous = node.prev_sibling
    while previous is not None and previous.type == "comment" and previous.end_point.row == row - 1:
        start, row = previous.start_byte, previous.start_point.row
        previous = previous.prev_sibling
    return start


def normalise_name(requested: str) -> str:
    """Drop a module path (`example.com/x/pkg.F` -> `pkg.F`) and type arguments (`T[...]`)."""
    name = re.sub(r"\[[^\]]*\]", "", requested.strip())
    head = name.split("(", 1)[0]
    if "/" in head:
        name = name[head.rindex("/") + 1 :]
    return name


def locate(files: TargetFiles, requested: str, file_name: str | None) -> Located:
    """The one function or method `requested` names, in `file_name` or anywhere in the target."""
    if file_name is not None:
        file = files.locate(file_name)
        sources = [(file, files.read(file).encode("utf-8"))]
    else:
        last = re.split(r"[.)]", requested)[-1]
        sources = list(_files_mentioning(files, last))
    wanted = normalise_name(requested)
    exact: list[Located] = []
    loose: list[Located] = []
    known: list[str] = []
    for file, data in sources:
        package, functions = declarations(parse(data))
        for function in functions:
            strict, relaxed = function.spellings(package)
            known.extend(sorted(strict))
            if wanted in strict:
                exact.append(Located(file, data, package, function))
            elif wanted in relaxed:
                loose.append(Located(file, data, package, function))
    return _choose(requested, exact or loose, known)


def _files_mentioning(files: TargetFiles, name: str) -> Iterator[tuple[TargetFile, bytes]]:
    for file in files.sources(".go", "go"):
        try:
            text = files.read(file)
        except EditRejected:
            continue  # not UTF-8 text, so not Go source this splicer could edit
        if name in text:
            yield file, text.encode("utf-8")


def _choose(requested: str, chosen: list[Located], known: list[str]) -> Located:
    if len(chosen) == 1:
        return chosen[0]
    if chosen:
        names = ", ".join(f"{_describe(c.function)} in {c.file.name}" for c in chosen)
        raise EditRejected(
            "function-ambiguous", f"{requested!r} names {len(chosen)} functions ({names})"
        )
    near = difflib.get_close_matches(normalise_name(requested), known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise EditRejected("function-not-found", f"no function or method {requested!r}{hint}")


def _describe(function: GoFunction) -> str:
    return function.name if function.receiver is None else f"({function.receiver}).{function.name}"


def splice(
    located: Located, source: str, preamble: str | None, imports: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """The new file text, and notes on anything in the answer that was not used."""
    old = located.function
    new_text, has_doc, dropped = _new_declaration(source, old)
    data = located.data
    replace_from = old.doc_start if has_doc else old.start
    before = b""
    if preamble is not None and preamble.strip():
        before = _checked_preamble(preamble) + b"\n\n"
    data = (
        data[: old.doc_start]
        + before
        + data[old.doc_start : replace_from]
        + new_text
        + data[old.end :]
    )
    data = add_imports(data, imports)
    _must_parse(data, located.file.name)
    notes = (f"comments after the new {old.name} were left out",) if dropped else ()
    return data.decode("utf-8"), notes


def _fragment(text: str, what: str) -> tuple[bytes, Node]:
    """The fragment's bytes after FRAGMENT_PREFIX, parsed; syntax-error when it does not parse."""
    data = FRAGMENT_PREFIX + normalise_patch(text).strip("\n").encode("utf-8") + b"\n"
    root = parse(data)
    error = first_error(root)
    if error is not None:
        line = error.start_point.row + 1 - FRAGMENT_LINES
        raise EditRejected(
            "syntax-error", f"{what} does not parse as Go (line {line}: {_error_text(error)})"
        )
    return data, root


def _new_declaration(source: str, old: GoFunction) -> tuple[bytes, bool, bool]:
    """(the declaration's bytes, whether it starts with a doc comment, whether comments after
    it were dropped); function-mismatch unless it is exactly one declaration of that name."""
    data, root = _fragment(source, f"the new source of {old.name}")
    nodes = [n for n in root.children[1:] if n.type != "comment"]
    if len(nodes) != 1 or nodes[0].type not in DECLARATIONS:
        kinds = ", ".join(n.type for n in nodes) or "nothing"
        raise EditRejected(
            "function-mismatch",
            f"the new source must be exactly one func declaration of {old.name}, not {kinds}; "
            "put other new top-level code in `preamble` and imports in `imports`",
        )
    _, (new,) = declarations(root)
    if (new.name, new.receiver) != (old.name, old.receiver):
        raise EditRejected(
            "function-mismatch",
            f"the new source declares {_describe(new)}, but the function replaced is "
            f"{_describe(old)}",
        )
    dropped = any(n.type == "comment" and n.start_byte >= new.end for n in root.children)
    return data[new.doc_start : new.end], new.doc_start < new.start, dropped


def _checked_preamble(preamble: str) -> bytes:
    data, root = _fragment(preamble, "the preamble")
    if any(n.type in ("package_clause", "import_declaration") for n in root.children[1:]):
        raise EditRejected(
            "import-invalid",
            "the preamble holds a package clause or imports; list import paths in `imports`",
        )
    return data[len(FRAGMENT_PREFIX) :].rstrip(b"\n")


def first_error(root: Node) -> Node | None:
    """The first ERROR or MISSING node in document order, or None for a clean parse."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return root


def _error_text(node: Node) -> str:
    if node.is_missing:
        return f"missing {node.type}"
    return f"unexpected {_text(node)[:40]!r}"


def _must_parse(data: bytes, name: str) -> None:
    error = first_error(parse(data))
    if error is not None:
        raise EditRejected(
            "syntax-error",
            f"{name} would not parse as Go (line {error.start_point.row + 1}: "
            f"{_error_text(error)})",
        )


def import_paths(imports: Sequence[str]) -> list[str]:
    """Each entry as a bare import path; import-invalid for anything that is not one."""
    paths: list[str] = []
    for entry in imports:
        path = entry.strip().strip('"`')
        if not _IMPORT_PATH.match(path):
            raise EditRejected(
                "import-invalid", f'{entry!r} is not a Go import path such as "bufio"'
            )
        if path not in paths:
            paths.append(path)
    return paths


def add_imports(data: bytes, imports: Sequence[str]) -> bytes:
    """`data` with every missing import path added, in sorted position where there is one."""
    root = parse(data)
    specs = [s for d in _import_declarations(root) for s in _specs(d)]
    present = {_spec_path(s) for s in specs}
    missing = sorted(p for p in import_paths(imports) if p not in present)
    if not missing:
        return data
    declarations_ = _import_declarations(root)
    block_list = next((b for d in declarations_ if (b := _spec_list(d)) is not None), None)
    if block_list is not None:
        return _into_block(data, block_list, missing)
    if declarations_:
        single = declarations_[-1]
        entries = [(_spec_path(s), _text(s)) for s in _specs(single)]
        entries += [(p, f'"{p}"') for p in missing]
        block = "import (\n" + "".join(f"\t{text}\n" for _, text in sorted(entries)) + ")"
        return data[: single.start_byte] + block.encode("utf-8") + data[single.end_byte :]
    clause = next(n for n in root.children if n.type == "package_clause")
    block = "\n\nimport (\n" + "".join(f'\t"{p}"\n' for p in missing) + ")"
    return data[: clause.end_byte] + block.encode("utf-8") + data[clause.end_byte :]


def _import_declarations(root: Node) -> list[Node]:
    return [n for n in root.children if n.type == "import_declaration"]


def _spec_list(declaration: Node) -> Node | None:
    return next((c for c in declaration.children if c.type == "import_spec_list"), None)


def _specs(declaration: Node) -> list[Node]:
    holder = _spec_list(declaration) or declaration
    return [c for c in holder.children if c.type == "import_spec"]


def _spec_path(spec: Node) -> str:
    path = spec.child_by_field_name("path")
    return _text(path).strip('"`') if path is not None else ""


def _into_block(data: bytes, spec_list: Node, missing: list[str]) -> bytes:
    """Insert each path before the first spec of the block's first group that sorts after it
    (a blank line ends a group: gofmt keeps standard and other imports apart that way)."""
    group: list[Node] = []
    for spec in (c for c in spec_list.children if c.type == "import_spec"):
        if group and spec.start_point.row > group[-1].end_point.row + 1:
            break
        group.append(spec)
    inserts: dict[int, list[bytes]] = {}
    for path in missing:
        later = next((s for s in group if _spec_path(s) > path), None)
        anchor = later or (group[-1] if group else None)
        if anchor is None:
            closing = spec_list.children[-1]
            inserts.setdefault(closing.start_byte, []).append(f'\t"{path}"\n'.encode())
            continue
        line_start = data.rfind(b"\n", 0, anchor.start_byte) + 1
        indent = data[line_start : anchor.start_byte]
        line_end = data.find(b"\n", anchor.end_byte)
        after = anchor.end_byte if line_end < 0 else line_end + 1
        at = line_start if later is not None else after
        inserts.setdefault(at, []).append(indent + f'"{path}"\n'.encode())
    for at in sorted(inserts, reverse=True):
        data = data[:at] + b"".join(inserts[at]) + data[at:]
    return data
