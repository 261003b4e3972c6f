"""The structure of one Python function, read by `speedproof.source.python` (libcst): loops,
calls, assignments, membership tests, slices and literals, each with the loops around it and
its line in the file.

The function is parsed alone (dedented, so a method parses too). When the whole file is known,
the attributes its class assigns to `self` are read as well, so `self.out.write(...)` can be
told to reach an `io.StringIO` or a file. Loops are `for` bodies, `while` loops and
comprehensions; the iterable of a `for` (and of a comprehension's first `for`) is evaluated
once, so it is not "in" that loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from speedproof.advisor.errors import AdvisorError
from speedproof.advisor.py_names import GROW_METHODS, Assigned, Reads, target_names
from speedproof.advisor.sites import Call, Destination, Growth, IoSite, Loop
from speedproof.advisor.sites import Site as SiteOf
from speedproof.advisor.subject import Subject
from speedproof.source.python import class_of_method, first_function, function_alone, module_of

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
IO_METHODS = frozenset({"write", "writelines", "flush", "read", "readline", "readlines"})
REAL_NAMES = frozenset({"sys.stdout", "sys.stderr", "sys.stdin", "sys.stdout.buffer"})
MEMORY_CALLS = frozenset({"io.StringIO", "StringIO", "io.BytesIO", "BytesIO"})
OPEN_CALLS = frozenset({"open", "io.open", "os.fdopen"})


PyLoop = Loop[cst.CSTNode]
Site = SiteOf[cst.CSTNode]
PyCall = Call[cst.CSTNode]


@dataclass(frozen=True)
class PyAssign(SiteOf[cst.CSTNode]):
    target: str = ""
    op: str = "="  # "=" for s = s + x, or the augmented operator ("+=")
    value: cst.BaseExpression | None = None


@dataclass
class PyFacts:
    subject: Subject
    module: cst.Module
    function: cst.FunctionDef
    params: dict[str, str | None] = field(default_factory=dict)
    bindings: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)
    loops: list[PyLoop] = field(default_factory=list)
    calls: list[PyCall] = field(default_factory=list)
    updates: list[PyAssign] = field(default_factory=list)  # s += x and s = s + x
    stores: list[Site] = field(default_factory=list)  # x[k] = v, x[k] += v
    members: list[Site] = field(default_factory=list)  # the container of `a in b`
    slices: list[Site] = field(default_factory=list)  # x[a:b] with a name in a bound
    literals: list[Site] = field(default_factory=list)  # list/set/dict displays with items
    comprehensions: list[Site] = field(default_factory=list)
    indexed_calls: list[Site] = field(default_factory=list)  # f(x)[i], f(x)[a:b]
    self_attrs: dict[str, cst.BaseExpression] = field(default_factory=dict)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    # ----- derived facts ------------------------------------------------------------------

    def io_sites(self) -> list[IoSite]:
        return [site for call in self.calls if (site := self._io_site(call)) is not None]

    def growths(self) -> list[Growth]:
        found = [
            Growth(c.receiver, c.text, c.line)
            for c in self.calls
            if c.in_loop and c.method in GROW_METHODS and c.receiver
        ]
        found += [Growth(s.text.split("[", 1)[0], s.text, s.line) for s in self.stores if s.in_loop]
        found += [
            Growth(u.target, u.text, u.line)
            for u in self.updates
            if u.in_loop and self.kind_of(u.target) == "list"
        ]
        return found

    def kind_of(self, name: str) -> str:
        """ "list", "set", "dict", "str" when every binding of `name` shows one, else ""."""
        kinds = {_display_kind(v, self) for v in self.bindings.get(name, []) if v is not None}
        annotation = self.params.get(name)
        if annotation:
            kinds.add(_annotation_kind(annotation))
        return kinds.pop() if len(kinds) == 1 else ""

    def assigned_within(self, loop: PyLoop) -> set[str]:
        """Names a loop rebinds or mutates: its targets, assignments, `x.append(...)` ..."""
        return self.bound_in(loop.node)

    def invariant(self, node: cst.CSTNode, loop: PyLoop) -> bool:
        """True when nothing `node` reads changes inside `loop` (its names are not rebound or
        mutated there, and it calls nothing)."""
        changed = self.assigned_within(loop)
        reader = Reads()
        node.visit(reader)
        return not reader.calls and not (reader.names & changed)

    def reads(self, node: cst.CSTNode) -> tuple[set[str], int]:
        """The names `node` reads and how many calls it makes."""
        reader = Reads()
        node.visit(reader)
        return reader.names, reader.calls

    def bound_in(self, node: cst.CSTNode) -> set[str]:
        """Names bound or mutated under `node` (its own loop targets included)."""
        collector = Assigned()
        node.visit(collector)
        return collector.names

    def _io_site(self, call: PyCall) -> IoSite | None:
        if call.name == "print":
            target = _keyword(call.node, "file")
            if target is None:
                return self._site(call, "stdout", ("real", "print() writes to sys.stdout"))
            return self._site(call, self.code(target), self.destination(target))
        if call.name == "input":
            return self._site(call, "stdin", ("real", "input() reads sys.stdin"))
        if call.name in ("os.write", "os.read"):
            return self._site(call, "a file descriptor", ("real", f"{call.name} is a system call"))
        node = call.node
        assert isinstance(node, cst.Call)
        if call.method in IO_METHODS and isinstance(node.func, cst.Attribute):
            return self._site(call, call.receiver, self.destination(node.func.value))
        return None

    def _site(self, call: PyCall, target: str, found: tuple[Destination, str]) -> IoSite:
        return IoSite(call.text, target, found[0], found[1], call.in_loop, call.line)

    def destination(self, node: cst.BaseExpression) -> tuple[Destination, str]:
        """Where an I/O call's receiver (or print's `file=`) leads, and how that is known."""
        text = self.code(node)
        if text in REAL_NAMES:
            return "real", f"{text} is a process stream"
        if isinstance(node, cst.Name):
            return self._name_destination(node.value)
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
        ):
            value = self.self_attrs.get(node.attr.value)
            if value is not None:
                kind, why = _value_destination(value, self)
                return kind, f"self.{node.attr.value} is {why}"
        return "unknown", f"the type of {text} is not visible in the function"

    def _name_destination(self, name: str) -> tuple[Destination, str]:
        annotation = self.params.get(name)
        if annotation and ("StringIO" in annotation or "BytesIO" in annotation):
            return "memory", f"{name} is annotated {annotation}"
        values = [v for v in self.bindings.get(name, []) if v is not None]
        if values:
            kinds = {_value_destination(v, self) for v in values}
            if len(kinds) == 1:
                kind, why = kinds.pop()
                return kind, f"{name} is {why}"
        return "unknown", f"the type of {name} is not visible in the function"


def _value_destination(value: cst.BaseExpression, facts: PyFacts) -> tuple[Destination, str]:
    text = facts.code(value)
    if text in REAL_NAMES:
        return "real", text
    if isinstance(value, cst.Call):
        callee = _dotted(value.func)
        if callee in MEMORY_CALLS:
            return "memory", f"an in-memory {callee}()"
        if callee in OPEN_CALLS:
            if _unbuffered_open(value):
                return "real", f"{callee}(..., buffering=0), unbuffered"
            return "buffered", f"{callee}(), buffered by default"
    return "unknown", f"{text[:40]} (not a known stream)"


def _unbuffered_open(call: cst.Call) -> bool:
    buffering = _keyword(call, "buffering")
    if buffering is None and len(call.args) >= 3 and call.args[2].keyword is None:
        buffering = call.args[2].value
    return isinstance(buffering, cst.Integer) and buffering.value == "0"


def _keyword(node: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    if not isinstance(node, cst.Call):
        return None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else ""
    return ""


def _display_kind(value: cst.BaseExpression, facts: PyFacts) -> str:
    if isinstance(value, cst.List | cst.ListComp):
        return "list"
    if isinstance(value, cst.Set | cst.SetComp):
        return "set"
    if isinstance(value, cst.Dict | cst.DictComp):
        return "dict"
    if isinstance(value, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return "str"
    if isinstance(value, cst.Call):
        callee = _dotted(value.func)
        known = {
            "list": "list",
            "set": "set",
            "frozenset": "set",
            "dict": "dict",
            "collections.Counter": "dict",
            "Counter": "dict",
            "defaultdict": "dict",
            "collections.defaultdict": "dict",
            "str": "str",
            "sorted": "list",
        }
        if callee in known:
            return known[callee]
        if callee.endswith(".join"):
            return "str"
    return "?"


def _annotation_kind(annotation: str) -> str:
    head = annotation.split("[", 1)[0].strip()
    mapping = {
        "list": "list",
        "List": "list",
        "Sequence": "list",
        "set": "set",
        "Set": "set",
        "frozenset": "set",
        "AbstractSet": "set",
        "dict": "dict",
        "Dict": "dict",
        "Mapping": "dict",
        "str": "str",
    }
    return mapping.get(head, "?")


def constant(node: cst.CSTNode) -> bool:
    """A literal the compiler could build once: numbers, strings, True/False/None, and tuples,
    lists and sets of those."""
    if isinstance(node, cst.Integer | cst.Float | cst.SimpleString | cst.ConcatenatedString):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return constant(node.expression)
    if isinstance(node, cst.Tuple | cst.List | cst.Set):
        return all(constant(e.value) for e in node.elements)
    return False


def _leftmost(value: cst.BaseExpression) -> str:
    """The name that starts a chain of `+`: `text` in `text + sep + str(x)`."""
    while isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        value = value.left
    return value.value if isinstance(value, cst.Name) else ""


def _bounded(iterable: cst.BaseExpression) -> bool:
    if constant(iterable):
        return True
    if isinstance(iterable, cst.Call) and _dotted(iterable.func) == "range":
        return all(constant(arg.value) for arg in iterable.args)
    return False


class _Reader(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, facts: PyFacts, offset: int) -> None:
        super().__init__()
        self.facts = facts
        self.offset = offset
        self.stack: list[PyLoop] = []
        self.suspended: list[tuple[cst.CompFor, PyLoop]] = []
        self.outer_for: list[cst.CompFor] = []

    def line(self, node: cst.CSTNode) -> int:
        position = self.get_metadata(PositionProvider, node)
        assert isinstance(position, CodeRange)
        return int(position.start.line) + self.offset

    def site(self, node: cst.CSTNode) -> tuple[cst.CSTNode, str, tuple[PyLoop, ...], int]:
        return node, self.facts.code(node), tuple(self.stack), self.line(node)

    def bind(self, target: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.facts.bindings.setdefault(target.value, []).append(value)
        else:
            for name in target_names(target):
                self.facts.bindings.setdefault(name, []).append(None)

    # loops ---------------------------------------------------------------------------------

    def visit_For_body(self, node: cst.For) -> None:
        loop = PyLoop(
            node,
            "for",
            self.facts.code(node.iter),
            _bounded(node.iter),
            self.line(node),
            len(self.stack),
        )
        self.facts.loops.append(loop)
        self.stack.append(loop)
        self.bind(node.target, None)

    def leave_For_body(self, node: cst.For) -> None:
        self.stack.pop()

    def visit_While(self, node: cst.While) -> None:
        loop = PyLoop(node, "while", "", False, self.line(node), len(self.stack))
        self.facts.loops.append(loop)
        self.stack.append(loop)

    def leave_While(self, original_node: cst.While) -> None:
        self.stack.pop()

    def _enter_comprehension(self, node: cst.CSTNode, first: cst.CompFor) -> None:
        iterable = first.iter
        loop = PyLoop(
            node,
            "comprehension",
            self.facts.code(iterable),
            _bounded(iterable),
            self.line(node),
            len(self.stack),
        )
        self.facts.comprehensions.append(Site(*self.site(node)))
        self.facts.loops.append(loop)
        self.stack.append(loop)
        self.outer_for.append(first)

    def _leave_comprehension(self) -> None:
        self.stack.pop()
        self.outer_for.pop()

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_comprehension(node, node.for_in)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._leave_comprehension()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._enter_comprehension(node, node.for_in)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._leave_comprehension()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._enter_comprehension(node, node.for_in)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._leave_comprehension()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_comprehension(node, node.for_in)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._leave_comprehension()

    def visit_CompFor_iter(self, node: cst.CompFor) -> None:
        if self.outer_for and node is self.outer_for[-1]:
            self.suspended.append((node, self.stack.pop()))

    def leave_CompFor_iter(self, node: cst.CompFor) -> None:
        if self.suspended and self.suspended[-1][0] is node:
            self.stack.append(self.suspended.pop()[1])

    # statements and expressions ------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind(target.target, node.value)
            self._store(target.target, node)
            value = node.value
            if isinstance(target.target, cst.Name) and isinstance(value, cst.BinaryOperation):
                name = target.target.value
                if _leftmost(value) == name:
                    self.facts.updates.append(PyAssign(*self.site(node), name, "=", value.right))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target, node)
        if isinstance(node.target, cst.Name):
            op = self.facts.code(node.operator).strip()
            self.facts.updates.append(PyAssign(*self.site(node), node.target.value, op, node.value))

    def _store(self, target: cst.BaseExpression, statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.facts.stores.append(Site(*self.site(statement)))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, node.item)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `"ERROR" in line` searches a string, not a collection: not a membership test.
        if isinstance(node.left, cst.SimpleString | cst.FormattedString):
            return
        for target in node.comparisons:
            if isinstance(target.operator, cst.In | cst.NotIn):
                self.facts.members.append(Site(*self.site(target.comparator)))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Call):
            self.facts.indexed_calls.append(Site(*self.site(node)))
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                reads = Reads()
                element.slice.visit(reads)
                if reads.names:
                    self.facts.slices.append(Site(*self.site(node)))
                return

    def visit_List(self, node: cst.List) -> None:
        self._display(node)

    def visit_Set(self, node: cst.Set) -> None:
        self._display(node)

    def visit_Dict(self, node: cst.Dict) -> None:
        self._display(node)

    def _display(self, node: cst.List | cst.Set | cst.Dict) -> None:
        if node.elements:
            self.facts.literals.append(Site(*self.site(node)))

    def visit_Call(self, node: cst.Call) -> None:
        self.facts.calls.append(PyCall(*self.site(node), _dotted(node.func)))


def _parameters(function: cst.FunctionDef, module: cst.Module) -> dict[str, str | None]:
    params = function.params
    found: dict[str, str | None] = {}
    every: list[cst.Param] = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            every.append(extra)
    for param in every:
        annotation = param.annotation
        found[param.name.value] = (
            module.code_for_node(annotation.annotation).strip() if annotation else None
        )
    return found


def _self_attributes(file_text: str, name: str) -> dict[str, cst.BaseExpression]:
    """`self.X = value` assignments in the class that defines method `name` (first match)."""
    module = module_of(file_text)
    klass = None if module is None else class_of_method(module, name)
    if klass is None:
        return {}
    collector = _SelfAssignments()
    klass.visit(collector)
    return collector.found


class _SelfAssignments(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: dict[str, cst.BaseExpression] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if (
                isinstance(t, cst.Attribute)
                and isinstance(t.value, cst.Name)
                and t.value.value == "self"
            ):
                self.found.setdefault(t.attr.value, node.value)


def read_python(subject: Subject) -> PyFacts:
    """The facts of `subject`'s function, or an AdvisorError when it does not parse."""
    module = function_alone(subject.source)
    if module is None:
        raise AdvisorError(f"{subject.name}: the function does not parse")
    function = first_function(module)
    if function is None:
        raise AdvisorError("the source holds no function definition")
    facts = PyFacts(subject, module, function, params=_parameters(function, module))
    for name in facts.params:
        facts.bindings.setdefault(name, [])
    if subject.file_text is not None:
        facts.self_attrs = _self_attributes(subject.file_text, function.name.value)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    wrapper.visit(_Reader(facts, subject.start_line - 1))
    return facts
