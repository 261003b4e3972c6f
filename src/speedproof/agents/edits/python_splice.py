"""Whole-function answers for Python, spliced with libcst so the rest of the file stays
byte-identical (libcst round-trips every comment, blank line and quote exactly).

The old function (top level or a method, found by qualified or bare name) is replaced by the
parsed new one; a comment written above the new function replaces the comment above the old one,
and the blank lines before it are kept. A preamble goes right before the top-level statement
holding the function; missing imports go after the module docstring and the leading imports.
The result must compile, so a `return` outside a function or a misplaced `__future__` import is
caught here rather than by the test gate.
"""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node

from speedproof.agents.edits.files import TargetFile, TargetFiles
from speedproof.agents.edits.result import EditRejected
from speedproof.judge.guard.patch_text import normalise_patch

# Blank lines PEP 8 puts between top-level definitions, used when a preamble pushes the
# function down and the function had no blank lines of its own to lend.
TOP_LEVEL_GAP = 2

ImportKey = tuple[str, str, str | None]


@dataclass(frozen=True)
class PythonFunction:
    """One function definition: its dotted name inside the module and where it sits."""

    qualname: str
    path: tuple[int, ...]  # index in the module body, then in each enclosing class body


@dataclass(frozen=True)
class Located:
    """The file, its text and parsed module, and the function the answer names."""

    file: TargetFile
    text: str
    module: cst.Module
    function: PythonFunction


def module_name(name: str) -> str:
    """`textstat/report.py` -> `textstat.report`; a package's `__init__.py` is the package."""
    parts = name.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def parse_file(file: TargetFile, text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        raise EditRejected(
            "syntax-error", f"{file.name} does not parse at the base revision: {err}"
        ) from err


def functions_in(body: Sequence[cst.BaseStatement], prefix: str = "") -> list[PythonFunction]:
    """Top-level functions and methods (classes nested in classes included), in file order."""
    found: list[PythonFunction] = []
    for index, node in enumerate(body):
        if isinstance(node, cst.FunctionDef):
            found.append(PythonFunction(prefix + node.name.value, (index,)))
        elif isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
            inner = functions_in(node.body.body, f"{prefix}{node.name.value}.")
            found.extend(PythonFunction(f.qualname, (index, *f.path)) for f in inner)
    return found


def locate(files: TargetFiles, requested: str, file_name: str | None) -> Located:
    """The one function `requested` names, in `file_name` or anywhere in the target."""
    if file_name is not None:
        file = files.locate(file_name)
        text = files.read(file)
        modules = [(file, text, parse_file(file, text))]
    else:
        modules = list(_modules_mentioning(files, requested.rsplit(".", 1)[-1]))
    everything = [
        Located(f, text, module, function)
        for f, text, module in modules
        for function in functions_in(module.body)
    ]
    return _choose(requested, everything, given=file_name is not None)


def _modules_mentioning(
    files: TargetFiles, name: str
) -> Iterator[tuple[TargetFile, str, cst.Module]]:
    """Parsed target files whose text mentions `name`; one that is not UTF-8 or does not parse
    cannot hold a function this splicer could edit, so the search passes over it."""
    for file in files.sources(".py", "python"):
        try:
            text = files.read(file)
            if name in text:
                yield file, text, parse_file(file, text)
        except EditRejected:
            continue


def _choose(requested: str, everything: list[Located], *, given: bool) -> Located:
    def full(found: Located) -> str:
        module = module_name(found.file.name)
        return f"{module}.{found.function.qualname}" if module else found.function.qualname

    exact = [f for f in everything if requested in (f.function.qualname, full(f))]
    loose = [
        f
        for f in everything
        if full(f).endswith("." + requested)
        or (given and requested.endswith("." + f.function.qualname))
    ]
    chosen = exact or loose
    if len(chosen) == 1:
        return chosen[0]
    if chosen:
        names = ", ".join(f"{f.function.qualname} in {f.file.name}" for f in chosen)
        raise EditRejected(
            "function-ambiguous", f"{requested!r} names {len(chosen)} functions ({names})"
        )
    known = sorted({full(f) for f in everything})
    near = difflib.get_close_matches(requested, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise EditRejected("function-not-found", f"no function or method {requested!r}{hint}")


def splice(
    located: Located, source: str, preamble: str | None, imports: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """The new file text, and notes on anything in the answer that was not used."""
    name = located.function.qualname.rsplit(".", 1)[-1]
    new_module = _parse_fragment(source, f"the new source of {name}")
    new_def = _the_function(new_module, name)
    body: list[cst.BaseStatement] = list(located.module.body)
    old_def = _node_at(body, located.function.path)
    new_def = new_def.with_changes(
        leading_lines=_merged_leading(old_def.leading_lines, new_module.header)
    )
    body = _replace_at(body, located.function.path, new_def)
    if preamble is not None and preamble.strip():
        body = _insert_preamble(body, located.function.path[0], preamble)
    body = _add_imports(body, imports)
    text = located.module.with_changes(body=body).code
    _must_compile(text, located.file.name)
    dropped = any(line.comment for line in new_module.footer)
    return text, (f"comments after the new {name} were left out",) if dropped else ()


def _parse_fragment(text: str, what: str) -> cst.Module:
    clean = textwrap.dedent(normalise_patch(text))
    try:
        return cst.parse_module(clean)
    except cst.ParserSyntaxError as err:
        raise EditRejected("syntax-error", f"{what} does not parse: {err}") from err


def _the_function(module: cst.Module, name: str) -> cst.FunctionDef:
    body = module.body
    if len(body) != 1 or not isinstance(body[0], cst.FunctionDef):
        kinds = ", ".join(type(node).__name__ for node in body) or "nothing"
        raise EditRejected(
            "function-mismatch",
            f"the new source must be exactly one function definition of {name!r}, not {kinds}; "
            "put other new top-level code in `preamble`",
        )
    if body[0].name.value != name:
        raise EditRejected(
            "function-mismatch",
            f"the new source defines {body[0].name.value!r}, but the function replaced is {name!r}",
        )
    return body[0]


def _node_at(body: Sequence[cst.BaseStatement], path: tuple[int, ...]) -> cst.FunctionDef:
    node = body[path[0]]
    for index in path[1:]:
        assert isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock)
        node = node.body.body[index]
    assert isinstance(node, cst.FunctionDef)
    return node


def _replace_at(
    body: list[cst.BaseStatement], path: tuple[int, ...], new: cst.FunctionDef
) -> list[cst.BaseStatement]:
    out = list(body)
    if len(path) == 1:
        out[path[0]] = new
        return out
    holder = out[path[0]]
    assert isinstance(holder, cst.ClassDef) and isinstance(holder.body, cst.IndentedBlock)
    inner = _replace_at(list(holder.body.body), path[1:], new)
    out[path[0]] = holder.with_changes(body=holder.body.with_changes(body=inner))
    return out


def _split_leading(
    lines: Sequence[cst.EmptyLine],
) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """(everything above, the comment lines directly above the definition)."""
    cut = len(lines)
    while cut > 0 and lines[cut - 1].comment is not None:
        cut -= 1
    return list(lines[:cut]), list(lines[cut:])


def _merged_leading(
    old: Sequence[cst.EmptyLine], new_header: Sequence[cst.EmptyLine]
) -> list[cst.EmptyLine]:
    above, comments = _split_leading(old)
    written = [line for line in new_header if line.comment is not None]
    return above + (written or comments)


def _insert_preamble(
    body: list[cst.BaseStatement], index: int, preamble: str
) -> list[cst.BaseStatement]:
    module = _parse_fragment(preamble, "the preamble")
    statements = list(module.body)
    if not statements:
        return body
    holder = body[index]
    # Module-level statements are always one of these two, both of which carry leading lines.
    assert isinstance(holder, cst.SimpleStatementLine | cst.BaseCompoundStatement)
    above, comments = _split_leading(holder.leading_lines)
    gap = above or [cst.EmptyLine() for _ in range(TOP_LEVEL_GAP)]
    own = [line for line in module.header if line.comment is not None]
    statements[0] = statements[0].with_changes(
        leading_lines=[*above, *own, *statements[0].leading_lines]
    )
    moved = holder.with_changes(leading_lines=[*gap, *comments])
    return [*body[:index], *statements, moved, *body[index + 1 :]]


def _add_imports(body: list[cst.BaseStatement], imports: Sequence[str]) -> list[cst.BaseStatement]:
    present = {key for node in body for key in _import_keys(node)}
    added: list[cst.BaseStatement] = []
    for line in imports:
        for statement in _parse_imports(line):
            keys = _import_keys(statement)
            if not keys <= present:
                added.append(statement.with_changes(leading_lines=()))
                present |= keys
    if not added:
        return body
    index = 1 if body and _is_docstring(body[0]) else 0
    after_docstring_only = index == 1
    while index < len(body) and _import_keys(body[index]):
        index += 1
        after_docstring_only = False
    if after_docstring_only:
        added[0] = added[0].with_changes(leading_lines=[cst.EmptyLine()])
    return [*body[:index], *added, *body[index:]]


def _parse_imports(line: str) -> list[cst.SimpleStatementLine]:
    try:
        module = cst.parse_module(textwrap.dedent(line).strip() + "\n")
    except cst.ParserSyntaxError as err:
        raise EditRejected("import-invalid", f"{line!r} is not a Python import: {err}") from err
    found = [node for node in module.body if isinstance(node, cst.SimpleStatementLine)]
    if not found or len(found) != len(module.body) or not all(_import_keys(n) for n in found):
        raise EditRejected(
            "import-invalid", f"{line!r} is not an import statement such as 'import re'"
        )
    return found


def _import_keys(node: cst.BaseStatement) -> frozenset[ImportKey]:
    """(module, name, alias) for each name a plain import line binds; empty for anything else."""
    if not isinstance(node, cst.SimpleStatementLine):
        return frozenset()
    keys: set[ImportKey] = set()
    for small in node.body:
        if isinstance(small, cst.Import):
            keys.update(("", _dotted(alias.name), _alias(alias)) for alias in small.names)
        elif isinstance(small, cst.ImportFrom):
            source = "." * len(small.relative) + (_dotted(small.module) if small.module else "")
            if isinstance(small.names, cst.ImportStar):
                keys.add((source, "*", None))
            else:
                keys.update((source, _dotted(a.name), _alias(a)) for a in small.names)
        else:
            return frozenset()
    return frozenset(keys)


def _dotted(node: cst.CSTNode) -> str:
    return get_full_name_for_node(node) or ""


def _alias(alias: cst.ImportAlias) -> str | None:
    return _dotted(alias.asname.name) if alias.asname is not None else None


def _is_docstring(node: cst.BaseStatement) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine)
        and len(node.body) == 1
        and isinstance(node.body[0], cst.Expr)
        and isinstance(node.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _must_compile(text: str, name: str) -> None:
    try:
        compile(text, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        raise EditRejected("syntax-error", f"{name} would not compile: {err}") from err
