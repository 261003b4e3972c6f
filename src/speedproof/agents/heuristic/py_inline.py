"""py-inline-helper: a one-expression helper called once per loop iteration, written in place.

`if not is_stopword(word):` in a loop costs a Python function call per iteration (a frame, the
argument binding, the return). Measured on CPython 3.11.7, 1000 iterations of `if h(x)` with
`def h(x): return x in S`, median of 21 runs: 40 µs with the call, 20 µs written in place. In
place it becomes `if not (word in STOPWORDS):`.

The helper must be a module-level function of this file, bound once, undecorated, with plain
parameters (no defaults, *args, **kwargs or keyword-only ones), whose body (after an optional
docstring) is `return <expression>`, or `if C: return A` followed by `return B` (or by `else:
return B`), written in place as `(A if C else B)`: C is evaluated, then exactly one of A and B,
as the statements do. The expression must not depend on the frame it runs in:
names, attributes, subscripts, literals, operators, comparisons, calls of a few builtins that
only compute (len, abs, min, max, isinstance, ord, chr, round, int, float, str, bool, tuple)
and of methods named like str's computing ones (lower, split, ..., taken to be str's). Any
other call may look at its caller's frame (logging records the calling function's name and
line), which inlining changes. The names the expression reads besides its parameters must mean
the same module-level binding or builtin at the call site (the calling function must not bind
them itself).

Arguments are evaluated before the body runs; in place, where the parameter is used. That is
the same when every argument is a name or a literal (reading one has no effect). One other
argument (`parts[0]`) is allowed when its parameter is used exactly once, unconditionally (not
on the right of `and`/`or`, in a conditional expression or further along a comparison chain),
and nothing before that use can run code or raise (a call, a subscript). A traceback through
the helper loses the helper's frame; another module that rebinds the helper at run time (a
test's monkeypatch) is not visible in one file, and the tests and behaviour gates cover it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from speedproof.agents.heuristic.py_edit import function_proposal
from speedproof.agents.heuristic.py_facts import (
    STR_METHODS,
    PyUnit,
    Replacement,
    first_effect,
    plain_parameters,
    read_names,
    replace_nodes,
)
from speedproof.agents.heuristic.subject import Finding, Proposal, split_judged

RULE = "py-inline-helper"
PURE_BUILTINS = frozenset(
    (
        "len",
        "abs",
        "min",
        "max",
        "isinstance",
        "ord",
        "chr",
        "round",
        "int",
        "float",
        "str",
        "bool",
        "tuple",
    )
)
# Nodes an effect-free expression may hold (besides calls of PURE_BUILTINS, checked apart).
REFUSED = (
    cst.Lambda,
    cst.NamedExpr,
    cst.Yield,
    cst.Await,
    cst.FormattedString,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.StarredElement,
    cst.Dict,
    cst.Set,
    cst.List,
)
ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float, cst.SimpleString)


@dataclass(frozen=True)
class _Helper:
    definition: cst.FunctionDef
    parameters: tuple[str, ...]
    expression: cst.BaseExpression


@dataclass(frozen=True)
class _Site:
    call: cst.Call
    helper: _Helper
    arguments: dict[str, cst.BaseExpression]


# -- the calls -----------------------------------------------------------------------------


def _called(unit: PyUnit) -> list[cst.Call]:
    """Calls of a bare name, once per loop iteration, that may be a helper of this module:
    neither a builtin nor bound by the function itself."""
    found = []
    for node in unit.function_nodes(cst.Call):
        assert isinstance(node, cst.Call)
        func = node.func
        if not isinstance(func, cst.Name) or not unit.per_iteration(node):
            continue
        if unit.is_builtin(func) or unit.binds_locally(func.value):
            continue
        if func.value != unit.function.name.value:
            found.append(node)
    return found


def _helper(unit: PyUnit, name: cst.Name) -> _Helper | str:
    """The one-expression helper `name` means, or why it is not one."""
    found = unit.module_function(name)
    return found if isinstance(found, str) else _shape(unit, found)


def _shape(unit: PyUnit, node: cst.FunctionDef) -> _Helper | str:
    name = node.name.value
    if node.decorators or node.asynchronous is not None:
        return f"{name} is decorated or async"
    parameters = plain_parameters(node)
    if parameters is None:
        return f"{name} has defaults, *args, **kwargs, keyword-only or positional-only parameters"
    value = _returned(node)
    if value is None:
        return f"{name} is not one return statement, nor `if C: return A` then `return B`"
    problem = _effects(unit, value)
    if problem is not None:
        return f"{name}: {problem}"
    return _Helper(node, parameters, value)


def _returned(node: cst.FunctionDef) -> cst.BaseExpression | None:
    """The one expression `node` returns: `return E`, or `if C: return A` followed by `return B`
    (or its `else: return B`) as `A if C else B`, which evaluates C, then exactly one of A and B,
    as the statements do."""
    statements = _statements(node)
    if len(statements) == 1 and isinstance(statements[0], cst.Return):
        return statements[0].value
    lines = _lines(node)
    if not lines or not isinstance(lines[0], cst.If):
        return None
    branch = lines[0]
    taken = _only_return(branch.body)
    otherwise = branch.orelse
    if isinstance(otherwise, cst.Else) and len(lines) == 1:
        other = _only_return(otherwise.body)
    elif otherwise is None and len(lines) == 2 and isinstance(lines[1], cst.SimpleStatementLine):
        other = _only_return(lines[1])
    else:
        return None
    if taken is None or other is None:
        return None
    return cst.IfExp(test=branch.test, body=taken, orelse=other)


def _only_return(block: cst.BaseSuite | cst.SimpleStatementLine) -> cst.BaseExpression | None:
    """E, when `block` is nothing but `return E`."""
    if isinstance(block, cst.IndentedBlock):
        if len(block.body) != 1:
            return None
        line: cst.CSTNode = block.body[0]
    else:
        line = block
    small = getattr(line, "body", None)
    if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite) or not small:
        return None
    only = line.body[0] if len(line.body) == 1 else None
    return only.value if isinstance(only, cst.Return) else None


def _lines(node: cst.FunctionDef) -> list[cst.BaseStatement]:
    """The statements of the body, a leading docstring left out."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return []
    lines = list(body.body)
    first = lines[0] if lines else None
    if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1:
        expr = first.body[0]
        if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.SimpleString):
            lines = lines[1:]
    return lines


def _statements(node: cst.FunctionDef) -> list[cst.BaseSmallStatement]:
    """The small statements of the body, a leading docstring left out; [] for compound ones."""
    body = node.body
    lines = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    found: list[cst.BaseSmallStatement] = []
    for line in lines:
        if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            return []
        found.extend(line.body)
    if found and isinstance(found[0], cst.Expr) and isinstance(found[0].value, cst.SimpleString):
        found = found[1:]
    return found


def _effects(unit: PyUnit, expression: cst.BaseExpression) -> str | None:
    """Why evaluating `expression` may have an effect, or None."""
    node = first_effect(expression, REFUSED, lambda call: _computing(unit, call))
    if node is None:
        return None
    if isinstance(node, cst.Call):  # REFUSED holds no call: this is one _computing refused
        return f"it calls `{unit.code(node.func)}`, which may have effects"
    return f"`{unit.code(node)}` is not a plain expression"


def _computing(unit: PyUnit, call: cst.Call) -> bool:
    """A call of a computing builtin, or of a method named like one of str's (taken to be
    str's); anything else may have effects, or look at the frame it is called from (logging
    records its caller's name and line)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in STR_METHODS
    return isinstance(func, cst.Name) and func.value in PURE_BUILTINS and unit.is_builtin(func)


# -- the call sites ------------------------------------------------------------------------


def _site(unit: PyUnit, call: cst.Call) -> _Site | str:
    assert isinstance(call.func, cst.Name)
    helper = _helper(unit, call.func)
    if isinstance(helper, str):
        return helper
    arguments = _bind(call, helper.parameters)
    if arguments is None:
        return f"`{unit.code(call)}` does not pass each parameter of {call.func.value} once"
    free = {n.value for n in read_names(helper.expression)} - set(helper.parameters)
    shadowed = sorted(n for n in free if not unit.visible_globally(n, call))
    if shadowed:
        return f"{unit.function.name.value} binds {', '.join(shadowed)} itself"
    problem = _order(unit, helper, arguments)
    if problem is not None:
        return problem
    return _Site(call, helper, arguments)


def _bind(call: cst.Call, parameters: Sequence[str]) -> dict[str, cst.BaseExpression] | None:
    bound: dict[str, cst.BaseExpression] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword is not None else None
        if name is None and position < len(parameters):
            name = parameters[position]
        if name is None or name not in parameters or name in bound:
            return None
        bound[name] = arg.value
    return bound if len(bound) == len(parameters) else None


def _trivial(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name | cst.Integer | cst.Float | cst.SimpleString)


def _order(unit: PyUnit, helper: _Helper, arguments: dict[str, cst.BaseExpression]) -> str | None:
    """Why the arguments would be evaluated differently in place, or None."""
    involved = [name for name, value in arguments.items() if not _trivial(value)]
    if not involved:
        return None
    if len(involved) > 1:
        return f"more than one argument of {helper.definition.name.value} is an expression"
    name = involved[0]
    uses = [n for n in read_names(helper.expression) if n.value == name]
    shown = unit.code(arguments[name])
    if len(uses) != 1 or _conditional(unit, uses[0], helper.expression):
        return f"`{shown}` would be evaluated other than once, or only sometimes, in place"
    if _runs_before(unit, uses[0], helper.expression):
        return f"code that may raise runs before `{shown}` would be evaluated, in place"
    return None


def _conditional(unit: PyUnit, use: cst.Name, root: cst.BaseExpression) -> bool:
    child: cst.CSTNode = use
    for ancestor in unit.ancestors(use):
        if isinstance(ancestor, cst.IfExp):
            return True
        if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
            return True
        if isinstance(ancestor, cst.Comparison) and child in ancestor.comparisons[1:]:
            return True
        if ancestor is root:
            return False
        child = ancestor
    return False


def _runs_before(unit: PyUnit, use: cst.Name, root: cst.BaseExpression) -> bool:
    """Whether a call or a subscript is evaluated before `use` in `root` (source order is
    evaluation order for the forms allowed, conditional expressions having been refused)."""
    start = unit.positions[use].start  # type: ignore[attr-defined]
    earlier: list[cst.CSTNode] = []

    class _Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.Call | cst.Subscript) and node in unit.positions:
                end = unit.positions[node].end  # type: ignore[attr-defined]
                if (end.line, end.column) <= (start.line, start.column):
                    earlier.append(node)
            return True

    root.visit(_Collect())
    return bool(earlier)


# -- the rule ------------------------------------------------------------------------------


def _sites(unit: PyUnit) -> tuple[list[_Site], list[str]]:
    return split_judged(_site(unit, call) for call in _called(unit))


def find(unit: PyUnit) -> Finding | None:
    if not unit.whole_file:
        calls = _called(unit)
        if not calls:
            return None
        return _finding(unit, calls[0], certain=False)
    sites, _ = _sites(unit)
    return _finding(unit, sites[0].call, certain=True) if sites else None


def _finding(unit: PyUnit, call: cst.Call, *, certain: bool) -> Finding:
    return Finding(
        rule=RULE,
        cause="repeated_work",
        evidence=(
            f"`{unit.code(call)}` in {unit.function.name.value} is a Python call per loop "
            "iteration"
            + ("" if certain else "; if it is a one-expression helper, it can be written in place")
        ),
        certain=certain,
    )


def explain(unit: PyUnit) -> str | None:
    if not _called(unit):
        return None  # no call in a loop: the generic "not found" says so
    if not unit.whole_file:
        return "the helpers are not shown without the whole file"
    sites, problems = _sites(unit)
    return None if sites else problems[0]


def propose(unit: PyUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not finding.certain:
        return None
    sites, _ = _sites(unit)
    mapping: dict[int, Replacement] = {id(site.call): _inlined(site) for site in sites}
    new_function = replace_nodes(unit.function, mapping)
    names = sorted({site.helper.definition.name.value for site in sites})
    hypothesis = (
        f"{unit.function.name.value} calls {', '.join(names)} once per loop iteration, a Python "
        "call each; written in place, the one expression the helper returns is evaluated "
        "without a call."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis)


class _Substitute(cst.CSTTransformer):
    """The expression with each read of a parameter replaced by its argument."""

    def __init__(self, arguments: dict[str, cst.BaseExpression], reads: list[cst.Name]) -> None:
        super().__init__()
        self.arguments = arguments
        self.reads = {id(n) for n in reads}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.arguments.get(original_node.value)
        if value is None or id(original_node) not in self.reads:
            return updated_node
        return _parenthesised(value.deep_clone())


def _parenthesised(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, ATOMS) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _inlined(site: _Site) -> cst.BaseExpression:
    reads = read_names(site.helper.expression)
    expression = site.helper.expression.visit(_Substitute(site.arguments, reads))
    assert isinstance(expression, cst.BaseExpression)
    return _parenthesised(expression)
