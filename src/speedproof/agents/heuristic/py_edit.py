"""Turning a rewritten libcst tree into an optimizer answer.

A rule returns the function's new node, optional module-level statements (hoisted constants)
and imports, and the answer is kind="function": the whole new definition, decorators included
(it replaces the decorated definition), with the preamble placed before the module-level
statement holding the function (the class, for a method), as the campaign's splicer places it.
Changes outside the function (a module-level constant) are search/replace blocks, computed from
a line diff of the old and the new file, each widened until its search text occurs exactly
once.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import libcst as cst

from speedproof.agents.answers import OptimizerAnswer, SearchReplace
from speedproof.agents.heuristic.py_facts import PyUnit, span_lines
from speedproof.agents.heuristic.subject import Finding, Proposal, RewriteDeclined


def function_proposal(
    unit: PyUnit,
    finding: Finding,
    new_function: cst.FunctionDef,
    *,
    hypothesis: str,
    preamble: Sequence[str] = (),
    imports: Sequence[str] = (),
) -> Proposal:
    """The proposal replacing the unit's function with `new_function`."""
    path = unit.subject.file
    old_text = unit.module.code
    replaced = unit.module.deep_replace(unit.function, new_function)
    assert isinstance(replaced, cst.Module)
    function_text = _function_text(unit, old_text, replaced.code)
    missing = [line for line in imports if not _has_import(unit.module, line)]
    final = _with_preamble(unit, replaced, preamble)
    final = _with_imports(final, missing)
    new_text = final.code
    _check_compiles(path, new_text)
    answer = OptimizerAnswer(
        hypothesis=hypothesis,
        rule=finding.rule,
        kind="function",
        file=path,
        function=unit.subject.name,
        source=function_text,
        preamble="\n".join(preamble) + "\n" if preamble else None,
        imports=list(missing),
    )
    return Proposal(finding=finding, answer=answer, files={path: new_text})


def module_proposal(
    unit: PyUnit, finding: Finding, new_module: cst.Module, *, hypothesis: str
) -> Proposal:
    """The proposal for a change outside the function, as search/replace blocks."""
    path = unit.subject.file
    new_text = new_module.code
    _check_compiles(path, new_text)
    answer = OptimizerAnswer(
        hypothesis=hypothesis,
        rule=finding.rule,
        kind="search_replace",
        blocks=blocks_between(path, unit.module.code, new_text),
    )
    return Proposal(finding=finding, answer=answer, files={path: new_text})


def _check_compiles(path: str, text: str) -> None:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        raise RewriteDeclined(f"the rewritten {path} does not compile: {err}") from err


def _function_text(unit: PyUnit, old_text: str, new_text: str) -> str:
    """The function's new lines, cut from the rewritten file: everything before the function is
    unchanged, so it starts on the same line and ends `delta` lines later."""
    start, end = span_lines(unit, unit.function)
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    delta = len(new_lines) - len(old_lines)
    if (
        new_lines[: start - 1] != old_lines[: start - 1]
        or new_lines[end + delta :] != (old_lines[end:])
    ):
        raise RewriteDeclined("the rewrite changed lines outside the function")
    return "".join(new_lines[start - 1 : end + delta])


def _with_preamble(unit: PyUnit, module: cst.Module, preamble: Sequence[str]) -> cst.Module:
    if not preamble:
        return module
    anchor_index = next(
        i
        for i, statement in enumerate(unit.module.body)
        if statement is unit.top_statement(unit.function)
    )
    anchor = module.body[anchor_index]
    leading = list(anchor.leading_lines)
    blanks = 0
    while blanks < len(leading) and leading[blanks].comment is None:
        blanks += 1
    # Blank lines go above the preamble; a comment directly above the function stays with it.
    statements = [cst.parse_statement(line) for line in preamble]
    statements[0] = statements[0].with_changes(leading_lines=leading[:blanks])
    spaced = anchor.with_changes(
        leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *leading[blanks:]]
    )
    body = [*module.body[:anchor_index], *statements, spaced, *module.body[anchor_index + 1 :]]
    return module.with_changes(body=body)


def _has_import(module: cst.Module, line: str) -> bool:
    wanted = cst.parse_statement(line)
    return any(
        isinstance(statement, cst.SimpleStatementLine)
        and module.code_for_node(statement).strip() == module.code_for_node(wanted).strip()
        for statement in module.body
    )


def _with_imports(module: cst.Module, lines: Sequence[str]) -> cst.Module:
    """`module` with the import `lines` added after its last module-level import (after the
    docstring when it has none)."""
    if not lines:
        return module
    body = list(module.body)
    position = 0
    for index, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(
            statement.body[0], cst.Import | cst.ImportFrom
        ):
            position = index + 1
    if position == 0 and body and _is_docstring(body[0]):
        position = 1
    new = [cst.parse_statement(line) for line in lines]
    return module.with_changes(body=[*body[:position], *new, *body[position:]])


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def blocks_between(path: str, old: str, new: str) -> list[SearchReplace]:
    """Search/replace blocks turning `old` into `new` when applied in order, each search text
    occurring exactly once in the text it is applied to."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    blocks: list[SearchReplace] = []
    current = old
    for group in matcher.get_grouped_opcodes(1):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        search, replace = "".join(a[i1:i2]), "".join(b[j1:j2])
        while not search or current.count(search) != 1:
            if i1 == 0 and i2 == len(a):
                raise RewriteDeclined("no unique search text for a change")
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            if i2 < len(a):
                i2, j2 = i2 + 1, j2 + 1
            search, replace = "".join(a[i1:i2]), "".join(b[j1:j2])
        blocks.append(SearchReplace(file=path, search=search, replace=replace))
        current = current.replace(search, replace, 1)
    if current != new:
        raise RewriteDeclined("the search/replace blocks do not reproduce the rewrite")
    return blocks
