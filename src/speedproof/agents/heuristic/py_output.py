"""py-print-writes: `print` in a loop, replaced by writes of preformatted lines.

Every `print(a, b)` parses its keyword arguments, looks up sys.stdout and calls its `write`
twice (the text, then `end`). `sys.stdout.write("%s %s\\n" % (a, b))` formats once and writes
once. A loop whose whole body is one print becomes a single
`sys.stdout.writelines(... for x in items)`, which still writes each line as soon as it is
produced: output stays in the same order, and a failure half-way leaves the same lines written
(collecting everything and writing once would lose them).

Exactness: `"%s" % (a,)` is `str(a)`, as print uses; sep and end must be string literals (a `%`
in them is escaped); print must be the builtin, called as a statement (its value unused),
without `file=` or `flush=`; `sys` must be the imported module or unbound (then `import sys` is
added). The loop variable of a rewritten loop must be unused outside it, since a generator does
not leave it bound. Writes go to the same sys.stdout object as before, so ordering with other
output of the process is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from speedproof.agents.heuristic.py_edit import function_proposal
from speedproof.agents.heuristic.py_facts import (
    PyUnit,
    Replacement,
    literal_value,
    replace_nodes,
)
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "py-print-writes"


@dataclass(frozen=True)
class _Print:
    statement: cst.Expr
    call: cst.Call
    text: str  # the expression that formats what print would write


def _prints(unit: PyUnit) -> list[_Print]:
    if not _sys_usable(unit):
        return []
    found = []
    for node in unit.function_nodes(cst.Expr):
        assert isinstance(node, cst.Expr)
        if isinstance(node.value, cst.Call) and unit.in_loop(node):
            text = _formatted(unit, node.value)
            if text is not None:
                found.append(_Print(node, node.value, text))
    return found


def _sys_usable(unit: PyUnit) -> bool:
    if unit.binds_locally("sys"):
        return False
    bindings = unit.global_bindings("sys")
    if not bindings:
        return True
    return all(
        isinstance(getattr(b, "node", None), cst.Import)
        and any(
            alias.asname is None and unit.code(alias.name) == "sys"
            for alias in b.node.names  # type: ignore[attr-defined]
        )
        for b in bindings
    )


def _formatted(unit: PyUnit, call: cst.Call) -> str | None:
    """The `"%s ...\\n" % (args,)` expression writing what this print call writes."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "print"):
        return None
    if not unit.is_builtin(call.func):
        return None
    sep, end = " ", "\n"
    positional: list[str] = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional.append(unit.code(arg.value).strip())
            continue
        try:
            value = literal_value(arg.value)
        except (ValueError, SyntaxError):
            return None
        if arg.keyword.value not in ("sep", "end") or not isinstance(value, str):
            return None
        if arg.keyword.value == "sep":
            sep = value
        else:
            end = value
    if not positional:
        return repr(end)
    template = sep.replace("%", "%%").join(["%s"] * len(positional)) + end.replace("%", "%%")
    return f"{template!r} % ({', '.join(positional)},)"


def _whole_loops(unit: PyUnit, prints: list[_Print]) -> dict[int, tuple[cst.For, _Print]]:
    """Loops whose entire body is one of `prints`, keyed by the print statement's id."""
    by_statement = {id(p.statement): p for p in prints}
    loops: dict[int, tuple[cst.For, _Print]] = {}
    for node in unit.function_nodes(cst.For):
        assert isinstance(node, cst.For)
        if node.orelse is not None or node.asynchronous is not None:
            continue
        statement = _only_statement(node.body)
        if statement is None or id(statement) not in by_statement:
            continue
        if unit.read_outside(node.target, node):
            continue
        loops[id(statement)] = (node, by_statement[id(statement)])
    return loops


def _only_statement(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    lines: list[cst.BaseSmallStatement] = []
    if isinstance(body, cst.SimpleStatementSuite):
        lines = list(body.body)
    elif isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
        only = body.body[0]
        if isinstance(only, cst.SimpleStatementLine):
            lines = list(only.body)
    return lines[0] if len(lines) == 1 else None


def find(unit: PyUnit) -> Finding | None:
    prints = _prints(unit)
    if not prints:
        return None
    return Finding(
        rule=RULE,
        cause="unbuffered_io",
        evidence=(
            f"`{unit.code(prints[0].call)}` in {unit.function.name.value} runs once per loop "
            f"iteration ({len(prints)} print call{'s' if len(prints) > 1 else ''} in loops)"
        ),
    )


def propose(unit: PyUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not unit.whole_file:
        return None
    prints = _prints(unit)
    loops = _whole_loops(unit, prints)
    mapping: dict[int, Replacement] = {}
    for item in prints:
        if id(item.statement) in loops:
            loop, _ = loops[id(item.statement)]
            mapping[id(loop)] = _writelines(unit, loop, item)
        else:
            write = cst.parse_expression(f"sys.stdout.write({item.text})")
            mapping[id(item.call)] = write
    new_function = replace_nodes(unit.function, mapping)
    imports = [] if unit.global_bindings("sys") else ["import sys"]
    hypothesis = (
        f"{unit.function.name.value} calls print once per loop iteration, and each print "
        "parses its arguments and writes twice; writing preformatted lines through "
        "sys.stdout writes the same text with less work per line."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis, imports=imports)


def _writelines(unit: PyUnit, loop: cst.For, item: _Print) -> cst.SimpleStatementLine:
    target = unit.code(loop.target).strip()
    items = unit.code(loop.iter).strip()
    expression = cst.parse_expression(f"sys.stdout.writelines({item.text} for {target} in {items})")
    return cst.SimpleStatementLine(
        body=[cst.Expr(value=expression)], leading_lines=loop.leading_lines
    )
