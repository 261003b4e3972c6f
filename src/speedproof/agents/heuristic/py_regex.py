"""py-hoist-regex: a regular expression compiled on every call, compiled once at import instead.

`re.compile(P)` and the module-level helpers (`re.match(P, s)`, `re.sub(P, r, s)`, ...) look P
up in re's cache on every call: a hash of the pattern and flags and a dictionary probe, about a
microsecond, paid once per line when the function runs per line. A module-level
`_NAME = re.compile(P, FLAGS)` pays it once; the call becomes `_NAME` or `_NAME.match(s)`.

It applies only when the pattern is a literal, a module-level string constant bound once and
defined above the function, or a name the function itself binds once to a string literal
(`pattern = "[a-z]+"` before a loop: the literal is compiled at module level, the local binding
stays), the flags (if any) are `re.X` flags or an integer, and `re` is the imported module. The
pattern is compiled here first: one that fails to compile would move the error from call time
to import time, so the rule declines it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment, GlobalScope

from speedproof.agents.heuristic.py_edit import function_proposal
from speedproof.agents.heuristic.py_facts import PyUnit, literal_value, replace_nodes
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "py-hoist-regex"

# Parameter names of the re functions, in positional order (Python 3.11).
SIGNATURES: dict[str, tuple[str, ...]] = {
    "compile": ("pattern", "flags"),
    "match": ("pattern", "string", "flags"),
    "search": ("pattern", "string", "flags"),
    "fullmatch": ("pattern", "string", "flags"),
    "findall": ("pattern", "string", "flags"),
    "finditer": ("pattern", "string", "flags"),
    "sub": ("pattern", "repl", "string", "count", "flags"),
    "subn": ("pattern", "repl", "string", "count", "flags"),
    "split": ("pattern", "string", "maxsplit", "flags"),
}


@dataclass(frozen=True)
class _Site:
    call: cst.Call
    method: str
    pattern: cst.BaseExpression
    flags: cst.BaseExpression | None
    rest: tuple[cst.Arg, ...]
    constant: str | None
    certain: bool
    # What the module-level re.compile compiles: the pattern itself, or the literal a local
    # name of the function is bound to.
    compiled: cst.BaseExpression


def find(unit: PyUnit) -> Finding | None:
    sites = _sites(unit)
    if not sites:
        return None
    first = sites[0]
    shown = unit.code(first.call)
    return Finding(
        rule=RULE,
        cause="repeated_work",
        evidence=(
            f"`{shown}` in {unit.function.name.value} looks the pattern up in re's cache on "
            f"every call ({len(sites)} such call{'s' if len(sites) > 1 else ''})"
        ),
        certain=all(site.certain for site in sites),
    )


def explain(unit: PyUnit) -> str | None:
    """Why no rewrite is written: no re call at all, or the first one's pattern or flags are
    not constant (a parameter, a string built at run time, a constant bound twice)."""
    sites = _sites(unit)
    if sites:
        return (
            None
            if all(s.certain for s in sites) and unit.whole_file
            else ("without the whole file, the pattern's name may not be a module constant")
        )
    calls = [
        unit.code(node)
        for node in unit.function_nodes(cst.Call)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "re"
        and node.func.attr.value in SIGNATURES
    ]
    if not calls:
        return None  # no re call: the generic "not found" says so
    return (
        f"the pattern or flags of `{calls[0]}` are not a literal, a module constant defined "
        "above the function or a local name bound once to a literal"
    )


def propose(unit: PyUnit) -> Proposal | None:
    finding = find(unit)
    if finding is None or not finding.certain or not unit.whole_file:
        return None
    sites = _sites(unit)
    hoisted: dict[tuple[str, str], str] = {}
    preamble: list[str] = []
    mapping: dict[int, cst.CSTNode] = {}
    for site in sites:
        key = (unit.code(site.compiled), unit.code(site.flags) if site.flags else "")
        if key not in hoisted:
            base = site.constant or unit.function.name.value.upper()
            name = unit.fresh_name(f"_{base.upper().lstrip('_')}_RE", set(hoisted.values()))
            hoisted[key] = name
            arguments = key[0] + (f", {key[1]}" if key[1] else "")
            preamble.append(f"{name} = re.compile({arguments})")
        mapping[id(site.call)] = _replacement(site, hoisted[key])
    new_function = replace_nodes(unit.function, mapping)
    calls = ", ".join(f"`{unit.code(site.call)}`" for site in sites[:2])
    hypothesis = (
        f"{unit.function.name.value} compiles its regular expression on every call ({calls}),"
        " paying re's cache lookup each time; compiled once at import, each call only matches."
    )
    return function_proposal(unit, finding, new_function, hypothesis=hypothesis, preamble=preamble)


def _replacement(site: _Site, name: str) -> cst.BaseExpression:
    if site.method == "compile":
        return cst.Name(name)
    rest = list(site.rest)
    if rest:
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name(site.method)), args=rest)


def _sites(unit: PyUnit) -> list[_Site]:
    sites = []
    for node in unit.function_nodes(cst.Call):
        assert isinstance(node, cst.Call)
        site = _site(unit, node)
        if site is not None:
            sites.append(site)
    return sites


def _site(unit: PyUnit, call: cst.Call) -> _Site | None:
    func = call.func
    if not (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "re"
        and func.attr.value in SIGNATURES
    ):
        return None
    is_re = unit.is_module_import(func.value, "re")
    if is_re is False:
        return None
    bound = _bind(call, SIGNATURES[func.attr.value])
    if bound is None or "pattern" not in bound:
        return None
    pattern = bound["pattern"].value
    flags = bound["flags"].value if "flags" in bound else None
    checked = _pattern(unit, pattern, flags)
    if checked is None:
        return None
    constant, pattern_certain, compiled = checked
    rest = tuple(arg for name, arg in bound.items() if name not in ("pattern", "flags"))
    return _Site(
        call=call,
        method=func.attr.value,
        pattern=pattern,
        flags=flags,
        rest=rest,
        constant=constant,
        certain=bool(is_re) and pattern_certain,
        compiled=compiled,
    )


def _bind(call: cst.Call, parameters: tuple[str, ...]) -> dict[str, cst.Arg] | None:
    """Map the call's arguments to parameter names; None for *args, **kwargs or a stray name."""
    bound: dict[str, cst.Arg] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(parameters):
                return None
            bound[parameters[position]] = arg
            position += 1
        elif arg.keyword.value in parameters and arg.keyword.value not in bound:
            bound[arg.keyword.value] = arg
        else:
            return None
    return bound


def _pattern(
    unit: PyUnit, pattern: cst.BaseExpression, flags: cst.BaseExpression | None
) -> tuple[str | None, bool, cst.BaseExpression] | None:
    """(constant name or None, certain, what to compile) when the pattern and flags are
    constant and compile."""
    flag_value = _flags(unit, flags)
    if flag_value is None:
        return None
    constant: str | None = None
    compiled = pattern
    if isinstance(pattern, cst.Name):
        local = _local_literal(unit, pattern)
        resolved = unit.module_constant(pattern)
        if local is not None:
            compiled = value_node = local
        elif resolved is None:
            # Without the file an unresolved name may be a module constant: say so, uncertainly.
            if not unit.whole_file and not unit.referents(pattern):
                return pattern.value, False, pattern
            return None
        else:
            _, assign = resolved
            if not unit.defined_before_function(assign):
                return None
            constant, value_node = pattern.value, assign.value
    else:
        value_node = pattern
    try:
        value = literal_value(value_node)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(value, str | bytes):
        return None
    try:
        re.compile(value, flag_value)
    except (re.error, TypeError, ValueError):
        return None
    return constant, True, compiled


def _local_literal(unit: PyUnit, name: cst.Name) -> cst.BaseExpression | None:
    """The literal `name` is bound to when the function binds it exactly once, by a plain
    `name = <str literal>` that always runs before the read `name`."""
    found = unit.referents(name)
    binding = next(iter(found)) if len(found) == 1 else None
    if not isinstance(binding, Assignment) or isinstance(binding.scope, GlobalScope):
        return None
    if len(binding.scope.assignments[name.value]) != 1:
        return None
    assign = unit.parent(unit.parent(binding.node) or binding.node)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    statement = unit.parent(assign)
    if assign.targets[0].target is not binding.node or statement is None:
        return None
    if not unit.precedes(statement, name):
        return None  # bound later, or only on some paths: the call could find it unbound
    try:
        value = literal_value(assign.value)
    except (ValueError, SyntaxError):
        return None
    return assign.value if isinstance(value, str | bytes) else None


def _flags(unit: PyUnit, flags: cst.BaseExpression | None) -> int | None:
    """The value of constant flags (`re.I | re.M`, an integer), 0 when absent, else None."""
    if flags is None:
        return 0
    if isinstance(flags, cst.BinaryOperation) and isinstance(flags.operator, cst.BitOr):
        left, right = _flags(unit, flags.left), _flags(unit, flags.right)
        return None if left is None or right is None else left | right
    if isinstance(flags, cst.Integer):
        value = literal_value(flags)
        return value if isinstance(value, int) else None
    if (
        isinstance(flags, cst.Attribute)
        and isinstance(flags.value, cst.Name)
        and flags.value.value == "re"
        and unit.is_module_import(flags.value, "re") is not False
    ):
        flag = getattr(re, flags.attr.value, None)
        return int(flag) if isinstance(flag, re.RegexFlag) else None
    return None
