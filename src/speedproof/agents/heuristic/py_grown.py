"""What the rules for a value grown in a loop share (`py_strings`' join, `py_bytes`): the line
that starts the value, the `name += part` steps that grow it, and a step written as an append
to a list of parts."""

from __future__ import annotations

import libcst as cst


def single_assignment(statement: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) for a line that is exactly `name = value`."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return None
    return assign.targets[0].target.value, assign.value


def is_growth_of(node: cst.AugAssign, name: str) -> bool:
    """Whether `node` is `name += part`."""
    return (
        isinstance(node.target, cst.Name)
        and node.target.value == name
        and isinstance(node.operator, cst.AddAssign)
    )


def appended(parts: str, step: cst.AugAssign) -> cst.Expr:
    """`parts.append(part)` in place of the step `name += part`."""
    append = cst.Call(
        func=cst.Attribute(value=cst.Name(parts), attr=cst.Name("append")),
        args=[cst.Arg(value=step.value)],
    )
    return cst.Expr(value=append, semicolon=step.semicolon)
