"""Facts about one Python file that the rewrite rules rely on, read by `speedproof.source.python`
(libcst).

A unit is the whole file when the role was given it, else the hot function alone (dedented).
Names are resolved with libcst's scope analysis, so "is `sorted` the builtin here", "is
`STOPWORDS` bound once, at module level" and "where else is it used" are answered from the
code, not guessed from spelling. Without the whole file a module-level name resolves to
nothing; rules then report an uncertain finding and never a rewrite.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import libcst as cst
from libcst.metadata import Assignment, BaseAssignment, BuiltinAssignment, GlobalScope

from speedproof.agents.heuristic.subject import Subject, unused_name
from speedproof.source.python import locate, resolved

N = TypeVar("N", bound=cst.CSTNode)
LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# str's methods that only compute a new value from the string. A rule that allows a call by one
# of these names takes the receiver to be a str: another type's method of that name with an
# effect would be missed, and the tests and the behaviour gate are what cover that.
TEXT_METHODS = ("strip", "lstrip", "rstrip", "lower", "upper", "casefold", "replace", "title")
STR_METHODS = (
    *TEXT_METHODS,
    "split",
    "rsplit",
    "partition",
    "rpartition",
    "startswith",
    "endswith",
    "zfill",
    "isdigit",
    "isalpha",
    "count",
    "find",
    "rfind",
    "splitlines",
    "removeprefix",
    "removesuffix",
)


@dataclass
class PyUnit:
    """A parsed file (or lone function) with scope, parent and position metadata."""

    subject: Subject
    module: cst.Module
    function: cst.FunctionDef
    whole_file: bool
    scopes: dict[cst.CSTNode, object]
    parents: dict[cst.CSTNode, cst.CSTNode]
    positions: dict[cst.CSTNode, object]

    # -- structure -------------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def line(self, node: cst.CSTNode) -> int:
        position = self.positions[node]
        return int(position.start.line)  # type: ignore[attr-defined]

    def end_line(self, node: cst.CSTNode) -> int:
        position = self.positions[node]
        return int(position.end.line)  # type: ignore[attr-defined]

    def in_loop(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs once per iteration of a loop inside the function."""
        for ancestor in self.ancestors(node):
            if ancestor is self.function:
                return False
            if isinstance(ancestor, LOOPS):
                return True
        return False

    def per_iteration(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs once per iteration of a loop of the function: in a loop's body
        (a while loop's test too) or a comprehension's element and conditions, but not in the
        iterable a loop starts from, which runs once. A nested function or lambda runs when it
        is called, so what is inside one does not count."""
        child = node
        for ancestor in self.ancestors(node):
            if ancestor is self.function or isinstance(ancestor, cst.FunctionDef | cst.Lambda):
                return False
            if isinstance(ancestor, cst.For) and child is ancestor.body:
                return True
            if isinstance(ancestor, cst.While) and child in (ancestor.test, ancestor.body):
                return True
            if isinstance(ancestor, COMPREHENSIONS) and child is not ancestor.for_in:
                return True
            if isinstance(ancestor, cst.CompFor) and child is not ancestor.iter:
                return True
            child = ancestor
        return False

    def precedes(self, statement: cst.CSTNode, node: cst.CSTNode) -> bool:
        """Whether the simple statement `statement` always runs before `node`: both are in one
        block, `node` in a later statement of it (or inside one)."""
        block = self.parent(statement)
        if not isinstance(block, cst.IndentedBlock):
            return False
        holder: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if ancestor is block:
                body = list(block.body)
                return body.index(holder) > body.index(statement)  # type: ignore[arg-type]
            holder = ancestor
        return False

    def visible_globally(self, name: str, at: cst.CSTNode) -> bool:
        """Whether `name`, read at `at`, can only mean the module-level binding or the builtin
        (no local, enclosing or comprehension binding of that name is in the way)."""
        scope = self.scopes.get(at)
        if scope is None:
            return False
        found = scope[name]  # type: ignore[index]
        return all(
            isinstance(a, BuiltinAssignment) or isinstance(a.scope, GlobalScope) for a in found
        )

    def top_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The module-level statement that holds `node`."""
        current = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Module):
                return current
            current = ancestor
        return current

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def function_nodes(self, kind: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Every node of `kind` inside the function, in source order."""
        found: list[cst.CSTNode] = []

        class _Collect(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                if isinstance(node, kind):
                    found.append(node)
                return True

        self.function.visit(_Collect())
        return found

    # -- names -----------------------------------------------------------------------------

    def referents(self, name: cst.Name) -> set[BaseAssignment]:
        """The bindings the name `name` (an access) may refer to; empty when unresolved."""
        scope = self.scopes.get(name)
        if scope is None:
            return set()
        for access in scope.accesses[name.value]:  # type: ignore[attr-defined]
            if access.node is name:
                return set(access.referents)
        return set()

    def is_builtin(self, name: cst.Name) -> bool:
        """`name` refers to the builtin of that name (without the file: nothing in the function
        rebinds it)."""
        found = self.referents(name)
        return bool(found) and all(isinstance(r, BuiltinAssignment) for r in found)

    def global_bindings(self, name: str) -> list[BaseAssignment]:
        scope = self.global_scope()
        if scope is None:
            return []
        return list(scope.assignments[name])

    def global_scope(self) -> GlobalScope | None:
        scope = self.scopes.get(self.module.body[0]) if self.module.body else None
        return scope if isinstance(scope, GlobalScope) else None

    def contains(self, container: cst.CSTNode, node: cst.CSTNode) -> bool:
        return node is container or any(a is container for a in self.ancestors(node))

    def read_outside(self, target: cst.BaseExpression, container: cst.CSTNode) -> bool:
        """Whether a name bound by `target` (a loop target) is read anywhere outside
        `container`, in this scope or a nested one; a binding of the same name in a
        comprehension, which has a scope of its own, is not a read."""
        for name in _target_names(target):
            scope = self.scopes.get(name)
            if scope is None:
                return True
            for binding in scope.assignments[name.value]:  # type: ignore[attr-defined]
                for access in binding.references:
                    if not self.contains(container, access.node):
                        return True
        return False

    def binds_locally(self, name: str) -> bool:
        """Whether the function binds `name` itself (a parameter, an assignment, an import)."""
        body = self.function.body
        first = body.body[0] if isinstance(body, cst.IndentedBlock) and body.body else None
        scope = self.scopes.get(first) if first is not None else None
        return scope is not None and bool(scope.assignments[name])  # type: ignore[attr-defined]

    def binds_globally(self, name: str) -> bool:
        """Whether the file binds `name` at module level (always False without the file)."""
        return bool(self.global_bindings(name))

    def is_module_import(self, name: cst.Name, module: str) -> bool | None:
        """True when `name` is `import module` at module level; None when it cannot be told
        (the function alone, and the name unresolved)."""
        found = self.referents(name)
        if not found:
            return None if not self.whole_file else False
        if len(found) != 1:
            return False
        binding = next(iter(found))
        if not isinstance(binding, Assignment) or not isinstance(binding.node, cst.Import):
            return False
        if not isinstance(binding.scope, GlobalScope):
            return False  # imported inside a function: a module-level use would not see it
        return any(
            alias.asname is None and self.code(alias.name) == module for alias in binding.node.names
        )

    def module_constant(self, name: cst.Name) -> tuple[Assignment, cst.Assign] | None:
        """The single module-level `NAME = value` statement `name` refers to, if that is the
        only binding of the name anywhere in the file."""
        found = self.referents(name)
        bindings = self.global_bindings(name.value)
        if len(found) != 1 or len(bindings) != 1:
            return None
        binding = next(iter(found))
        if binding is not bindings[0] or not isinstance(binding, Assignment):
            return None
        target = binding.node
        assign = self.parent(self.parent(target) or target)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        if assign.targets[0].target is not target:
            return None
        statement = self.parent(assign)
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        if not isinstance(self.parent(statement), cst.Module):
            return None
        return binding, assign

    def module_function(self, name: cst.Name) -> cst.FunctionDef | str:
        """The module-level function `name` refers to, when it is the name's only binding in
        the file; otherwise why not, in words."""
        found = self.referents(name)
        bindings = self.global_bindings(name.value)
        if not found:
            return f"{name.value} is not defined in this file"
        binding = next(iter(found))
        if len(found) != 1 or len(bindings) != 1 or binding is not bindings[0]:
            return f"{name.value} is bound more than once"
        node = binding.node if isinstance(binding, Assignment) else None
        if isinstance(node, cst.Import | cst.ImportFrom):
            return f"{name.value} is imported: its definition is in another file"
        if not isinstance(node, cst.FunctionDef) or not isinstance(binding.scope, GlobalScope):
            return f"{name.value} is not a module-level function"
        return node

    def defined_before_function(self, node: cst.CSTNode) -> bool:
        return self.line(node) < self.line(self.top_statement(self.function))

    def all_names(self) -> set[str]:
        return names_in(self.module)

    def fresh_name(self, base: str, taken: set[str] | None = None) -> str:
        """`base`, or `base_2`, `base_3`, ... : the first not used anywhere in the unit."""
        return unused_name(base, self.all_names() | (taken or set()), joiner="_")


def _target_names(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for element in target.elements for n in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def literal_value(node: cst.BaseExpression) -> object:
    """The value of a literal expression (strings, numbers, tuples of them); raises ValueError
    when `node` is not a plain literal (f-strings, names, calls)."""
    if isinstance(node, cst.FormattedString) or any(
        isinstance(n, cst.FormattedString) for n in _descendants(node)
    ):
        raise ValueError("an f-string is not a literal")
    code = cst.Module(body=[]).code_for_node(node)
    return ast.literal_eval(code.strip())


def _descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for child in node.children:
        yield child
        yield from _descendants(child)


def is_hashable_literal(node: cst.BaseExpression) -> bool:
    """A str, bytes, int or float literal: hashable, and equal only to what hashes alike."""
    try:
        value = literal_value(node)
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, str | bytes | int | float) and not isinstance(value, bool)


def obviously_unhashable(node: cst.BaseExpression) -> bool:
    return isinstance(
        node, cst.List | cst.Dict | cst.Set | cst.ListComp | cst.DictComp | cst.SetComp
    )


def parse_unit(subject: Subject) -> PyUnit | None:
    """The unit for `subject`, or None when the source does not parse or the function is not
    in it."""
    text = subject.file_text
    whole_file = text is not None
    parsed = resolved(text if text is not None else textwrap.dedent(subject.source))
    if parsed is None:
        return None
    function = locate(parsed.module, subject, parsed.positions if whole_file else None)
    if function is None:
        return None
    return PyUnit(
        subject=subject,
        module=parsed.module,
        function=function,
        whole_file=whole_file,
        scopes=parsed.scopes,
        parents=parsed.parents,
        positions=parsed.positions,
    )


def span_lines(unit: PyUnit, node: cst.FunctionDef) -> tuple[int, int]:
    """1-based inclusive line span of `node`, decorators included: a whole-function answer
    replaces the decorated definition, so its source must carry the decorators."""
    start = unit.line(node.decorators[0]) if node.decorators else unit.line(node)
    return start, unit.end_line(node)


def plain_parameters(node: cst.FunctionDef | cst.Lambda) -> tuple[str, ...] | None:
    """The parameter names of `node` when each is plain: no default, no *args or **kwargs, no
    keyword-only or positional-only parameter (so a call binds them by position or name)."""
    params = node.params
    plain = params.star_arg is cst.MaybeSentinel.DEFAULT and not params.star_kwarg
    if not plain or params.kwonly_params or params.posonly_params:
        return None
    if any(p.default is not None for p in params.params):
        return None
    return tuple(p.name.value for p in params.params)


def read_names(node: cst.CSTNode) -> list[cst.Name]:
    """The names `node` reads, in source order: not an attribute's name (`x.word`) or a keyword
    (`f(word=1)`), which name no variable."""
    found: list[cst.Name] = []
    skipped: set[int] = set()

    class _Collect(cst.CSTVisitor):
        def visit_Attribute(self, inner: cst.Attribute) -> None:
            skipped.add(id(inner.attr))

        def visit_Arg(self, inner: cst.Arg) -> None:
            if inner.keyword is not None:
                skipped.add(id(inner.keyword))

        def visit_Name(self, inner: cst.Name) -> None:
            if id(inner) not in skipped:
                found.append(inner)

    node.visit(_Collect())
    return found


def first_effect(
    expression: cst.CSTNode,
    refused: tuple[type[cst.CSTNode], ...],
    computing: Callable[[cst.Call], bool],
) -> cst.CSTNode | None:
    """The first node of `expression` (in visiting order: a node before the nodes it holds)
    that may have an effect: one of the `refused` kinds, or a call `computing` does not accept
    (each rule knows which calls only compute where it applies); None when there is none."""
    found: list[cst.CSTNode] = []

    class _Check(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if found:
                return False  # the first one is the answer: nothing after it is looked at
            if isinstance(node, refused) or (isinstance(node, cst.Call) and not computing(node)):
                found.append(node)
            return not found

    expression.visit(_Check())
    return found[0] if found else None


def names_in(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, inner: cst.Name) -> None:
            found.add(inner.value)

    node.visit(_Names())
    return found


Replacement = cst.CSTNode | cst.FlattenSentinel[Any] | Callable[[Any], Any]


class _Replace(cst.CSTTransformer):
    def __init__(self, mapping: Mapping[int, Replacement]) -> None:
        super().__init__()
        self.mapping = mapping

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        replacement = self.mapping.get(id(original_node))
        if replacement is None:
            return updated_node
        if callable(replacement):
            return replacement(updated_node)
        return replacement


def replace_nodes(root: N, mapping: Mapping[int, Replacement]) -> N:
    """`root` with every node whose id() is a key of `mapping` replaced: by the value when it
    is a node (or a FlattenSentinel of statements), or by the value applied to the node as
    rewritten so far when it is a function."""
    result = root.visit(_Replace(mapping))
    assert isinstance(result, type(root))
    return result
