"""go-bufio-package-writer: a function that writes in a loop to a package variable
`var stdout io.Writer = os.Stdout` (the shape command-line tools use so their tests can swap in
a buffer: golang.org/x/tools' digraph, for one) gets that variable set to a bufio.Writer in
`main`, around the call that reaches it, flushed where the call's writes would have ended:

    bufferedStdout := bufio.NewWriter(os.Stdout)
    stdout = bufferedStdout
    if err := digraph(args[0], args[1:]); err != nil {
        bufferedStdout.Flush()
        fmt.Fprintf(os.Stderr, "digraph: %s\\n", err)
        os.Exit(1)
    }
    bufferedStdout.Flush()

The same bytes reach os.Stdout in 4 KiB writes, all before anything after the call runs (a
branch of the `if` whose initialiser holds the call flushes first thing). What is followed and
what is declined, and why:

* the variable: unexported (no other package can assign it), declared alone at package level
  with type `io.Writer` and value `os.Stdout`; another type (`*os.File`) could not hold a
  bufio.Writer. The package's other files are not read: one that assigns the variable in an
  `init` is outside what the rule sees, and the judge's behaviour gate compares the output.
* each use of it in the file: a write whose result is unused (`fmt.Fprint*(v, ...)`,
  `io.WriteString(v, ...)`, `v.Write(...)`, `v.WriteString(...)`), a save (`old := v`) or an
  assignment of a name (`v = buf`, `v = old`). Saves and assignments copy what the variable
  holds, so the swap-and-restore digraph does around a bytes.Buffer keeps working; a use of any
  other shape (compared, type-asserted, passed on, shadowed) declines.
* the call site: a statement of `main`'s own body (an expression, an assignment, or an `if`
  whose initialiser holds the call, without an `else if`) that calls a function of this file
  reaching the hot function. Only `main`: after the flush, nothing may write to the variable
  again (the buffer would keep it), which only the rest of `main` can be checked for. Nothing in
  `main` before the site, after it or in the `if`'s branches may reach the variable (by name or
  through a function of this file; a function of another file is assumed to), `main` may have
  no `defer` (it runs after the flush) and start no goroutine.
* the called function, and everything it calls in this file, may write to os.Stdout or
  os.Stderr only through the variable, and may not exit or start goroutines (`go_quiet`'s
  checks, the variable's writes excepted). A run that panics loses the buffered tail; it has
  already failed, and the behaviour gate compares only runs that succeed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from speedproof.agents.heuristic.go_edit import file_proposal
from speedproof.agents.heuristic.go_facts import Edit, GoUnit, call_of, statements_of
from speedproof.agents.heuristic.go_quiet import BUILTINS, noisy_call
from speedproof.agents.heuristic.go_writer import FPRINT, METHODS
from speedproof.agents.heuristic.subject import Finding, Proposal

RULE = "go-bufio-package-writer"
SITES = ("expression_statement", "short_var_declaration", "assignment_statement", "if_statement")


@dataclass(frozen=True)
class _Plan:
    variable: str
    sites: tuple[Node, ...]


def _write_call(unit: GoUnit, use: Node) -> Node | None:
    """The write call `use` is the writer of, when it is one whose result is unused."""
    parent = use.parent
    call = parent.parent if parent is not None else None
    if parent is None or call is None or call.type != "call_expression":
        return None
    if call.parent is None or call.parent.type != "expression_statement":
        return None
    if parent.type == "selector_expression":
        field = parent.child_by_field_name("field")
        is_method = field is not None and unit.text(field) in METHODS
        return call if is_method and parent.child_by_field_name("operand") == use else None
    parts = call_of(unit, call)
    if parent.type != "argument_list" or parts is None or parts[2][:1] != [use]:
        return None
    fmt, io = unit.package_name("fmt") or "fmt", unit.package_name("io") or "io"
    operand, method, _ = parts
    is_write = (operand == fmt and method in FPRINT) or (operand == io and method == "WriteString")
    return call if is_write else None


def _copies(unit: GoUnit, use: Node) -> bool:
    """`old := v` (a save) or `v = name` (an assignment of a name)."""
    parent = use.parent
    holder = parent.parent if parent is not None else None
    if parent is None or holder is None or parent.type != "expression_list":
        return False
    left, right = holder.child_by_field_name("left"), holder.child_by_field_name("right")
    if left is None or right is None or len(left.named_children) + len(right.named_children) != 2:
        return False
    if holder.type == "short_var_declaration":
        return parent == right
    operator = holder.child_by_field_name("operator")
    assigned = right.named_children[0].type == "identifier"
    is_plain = operator is not None and unit.text(operator) == "="
    return holder.type == "assignment_statement" and is_plain and parent == left and assigned


def _variable(unit: GoUnit, name: str) -> Node | None:
    """The package-level `var name io.Writer = os.Stdout` spec, alone in its declaration."""
    io, os = unit.package_name("io") or "io", unit.package_name("os") or "os"
    for declaration in unit.tree.root_node.children:
        if declaration.type != "var_declaration":
            continue
        for spec in (n for n in unit.walk(declaration) if n.type == "var_spec"):
            names = spec.children_by_field_name("name")
            kind, value = spec.child_by_field_name("type"), spec.child_by_field_name("value")
            if [unit.text(n) for n in names] != [name] or kind is None or value is None:
                continue
            if unit.text(kind) == f"{io}.Writer" and unit.text(value) == f"{os}.Stdout":
                return spec
    return None


def _uses_problem(unit: GoUnit, name: str, declaration: Node) -> tuple[set[int], str | None]:
    """The start bytes of every write through the variable in the file, or why a use of it
    rules buffering out."""
    writes: set[int] = set()
    for use in unit.uses(name, unit.tree.root_node):
        if unit.inside(use, declaration):
            continue
        call = _write_call(unit, use)
        if call is not None:
            writes.add(call.start_byte)
        elif not _copies(unit, use):
            shown = unit.text(use.parent if use.parent is not None else use).split("\n")[0]
            return set(), f"`{shown}` uses {name} other than by writing to it, saving or setting it"
    return writes, None


# -- what reaches what ---------------------------------------------------------------------


def _callee_names(unit: GoUnit, node: Node) -> list[tuple[str, bool]]:
    """(name, called as a method) of every call under `node` to a name that is no package's."""
    packages = set(unit.imports().values())
    found: list[tuple[str, bool]] = []
    for call in (n for n in unit.walk(node) if n.type == "call_expression"):
        function = call.child_by_field_name("function")
        if function is not None and function.type == "identifier":
            found.append((unit.text(function), False))
        elif function is not None and function.type == "selector_expression":
            operand, field = (function.child_by_field_name(k) for k in ("operand", "field"))
            if operand is not None and field is not None and unit.text(operand) not in packages:
                found.append((unit.text(field), True))
    return found


def _reaches(unit: GoUnit, node: Node, target: str, memo: dict[str, bool]) -> bool:
    """Whether running `node` may name `target` (an identifier), directly or through a function
    of this file; a plain call to a function defined elsewhere is assumed to."""
    if unit.uses(target, node):
        return True
    for name, method in _callee_names(unit, node):
        if name not in memo:
            memo[name] = False  # recursion: assume not while the body is being read
            bodies = unit.functions_named(name)
            unknown = not bodies and not method and name not in BUILTINS
            memo[name] = unknown or any(_reaches(unit, b, target, memo) for b in bodies)
        if memo[name]:
            return True
    return False


# -- the call sites ------------------------------------------------------------------------


def _main_body(unit: GoUnit) -> list[Node] | None:
    mains = [f for f in unit.functions_named("main") if f.type == "function_declaration"]
    body = mains[0].child_by_field_name("body") if len(mains) == 1 else None
    return statements_of(body) if body is not None else None


def _branches(statement: Node) -> list[Node]:
    if statement.type != "if_statement":
        return []
    found = [statement.child_by_field_name("consequence")]
    found.append(statement.child_by_field_name("alternative"))
    return [b for b in found if b is not None]


def _site_calls(unit: GoUnit, statement: Node) -> list[Node]:
    """The calls a site statement makes before its branches run."""
    branches = _branches(statement)
    return [
        n
        for n in unit.walk(statement)
        if n.type == "call_expression" and not any(unit.inside(n, b) for b in branches)
    ]


def _site_problem(
    unit: GoUnit, body: list[Node], index: int, variable: str, writes: set[int]
) -> str | None:
    statement = body[index]
    shown = unit.text(statement).split("\n")[0]
    if statement.type not in SITES or unit.statement_line(statement) is None:
        return f"`{shown}` in main is not a statement of its own line"
    if any(b.type == "if_statement" for b in _branches(statement)):
        return f"`{shown}` has an `else if`, which the flush cannot precede"
    quiet: dict[str, bool] = {}
    for call in _site_calls(unit, statement):
        if noisy_call(unit, call, quiet, writes):
            return f"`{unit.text(call).split(chr(10))[0]}` may write output or end the process"
    memo: dict[str, bool] = {}
    rest = [*body[:index], *body[index + 1 :], *_branches(statement)]
    for other in rest:
        if _reaches(unit, other, variable, memo):
            return f"`{unit.text(other).split(chr(10))[0]}` in main may write to {variable} too"
    return None


def _reaching_hot(unit: GoUnit) -> set[str]:
    """Names of the file's functions whose calls reach the hot function (it included)."""
    hot = unit.subject.bare_name
    reaching, memo = {hot}, dict[str, bool]()
    for declaration in unit.tree.root_node.children:
        name = declaration.child_by_field_name("name")
        if declaration.type != "function_declaration" or name is None:
            continue
        if _reaches(unit, declaration, hot, memo):
            reaching.add(unit.text(name))
    return reaching


def _sites(unit: GoUnit, variable: str, writes: set[int]) -> tuple[list[Node], list[str]]:
    body = _main_body(unit)
    if body is None:
        return [], ["the file has no func main"]
    if any(n.type in ("defer_statement", "go_statement") for s in body for n in unit.walk(s)):
        return [], ["main defers a call or starts a goroutine, which could write after a flush"]
    reaching = _reaching_hot(unit) - {"main"}
    sites: list[Node] = []
    problems: list[str] = []
    for index, statement in enumerate(body):
        called = {name for name, method in _callee_names(unit, statement) if not method}
        if not called & reaching:
            continue
        problem = _site_problem(unit, body, index, variable, writes)
        if problem is None:
            sites.append(statement)
        else:
            problems.append(problem)
    return sites, problems


# -- the rule ------------------------------------------------------------------------------


def _looped_writer(unit: GoUnit) -> tuple[str, Node] | None:
    """(the variable, the write) of the first write in a loop of the hot function to a name
    the function neither declares nor takes as a parameter."""
    for use in unit.identifiers(unit.function):
        call = _write_call(unit, use)
        if call is None or not unit.in_loop(call):
            continue
        name = unit.text(use)
        declared = [u for u in unit.uses(name, unit.function) if not _is_read(u)]
        if not declared and name[:1].islower():
            return name, call
    return None


def _is_read(use: Node) -> bool:
    parent = use.parent
    holder = parent.parent if parent is not None else None
    if parent is None:
        return True
    if parent.type in ("parameter_declaration", "var_spec", "range_clause"):
        return False
    if holder is not None and holder.type == "short_var_declaration":
        return holder.child_by_field_name("left") != parent
    return True


def _plan(unit: GoUnit) -> _Plan | str:
    looped = _looped_writer(unit)
    if looped is None:
        return f"{unit.subject.bare_name} writes to no package-level writer in a loop"
    variable = looped[0]
    if not unit.whole_file:
        return f"{variable} and the callers are not shown without the whole file"
    declaration = _variable(unit, variable)
    if declaration is None:
        shape = f"var {variable} io.Writer = os.Stdout"
        return f"{variable} is not declared alone in this file as `{shape}`"
    writes, problem = _uses_problem(unit, variable, declaration)
    if problem is not None:
        return problem
    sites, problems = _sites(unit, variable, writes)
    if not sites:
        return (
            problems[0] if problems else f"main calls nothing that reaches {unit.subject.bare_name}"
        )
    return _Plan(variable, tuple(sites))


def find(unit: GoUnit) -> Finding | None:
    looped = _looped_writer(unit)
    if looped is None:
        return None
    variable, call = looped
    return Finding(
        rule=RULE,
        cause="unbuffered_io",
        evidence=(
            f"`{unit.text(call).split(chr(10))[0]}` in {unit.subject.bare_name} writes to the "
            f"package-level writer {variable} once per loop iteration: one system call each "
            "while it holds os.Stdout"
        ),
        certain=isinstance(_plan(unit), _Plan),
    )


def explain(unit: GoUnit) -> str | None:
    if _looped_writer(unit) is None:
        return None
    plan = _plan(unit)
    return plan if isinstance(plan, str) else None


def _flush_edits(unit: GoUnit, site: Node, name: str) -> list[Edit]:
    indent = unit.indent(site)
    edits = [Edit(site.end_byte, site.end_byte, f"\n{indent}{name}.Flush()")]
    for branch in _branches(site):
        opening = next(c for c in branch.children if c.type == "{")
        edits.append(Edit(opening.end_byte, opening.end_byte, f"\n{indent}\t{name}.Flush()"))
    return edits


def propose(unit: GoUnit) -> Proposal | None:
    plan = _plan(unit)
    finding = find(unit)
    if isinstance(plan, str) or finding is None:
        return None
    bufio = unit.package_name("bufio") or "bufio"
    stdout = f"{unit.package_name('os') or 'os'}.Stdout"
    edits: list[Edit] = []
    taken: set[str] = set()
    for site in plan.sites:
        name = unit.fresh("bufferedStdout", taken)
        taken.add(name)
        indent, start = unit.indent(site), unit.line_start(site.start_byte)
        opening = (
            f"{indent}{name} := {bufio}.NewWriter({stdout})\n{indent}{plan.variable} = {name}\n"
        )
        edits.append(Edit(start, start, opening))
        edits.extend(_flush_edits(unit, site, name))
    hypothesis = (
        f"{unit.subject.bare_name} writes to the package-level io.Writer {plan.variable} once "
        "per loop iteration, and it holds the unbuffered os.Stdout: one system call per write. "
        f"Setting {plan.variable} to a bufio.Writer in main around the call, flushed where the "
        "call's writes end, writes the same bytes in a few large writes."
    )
    return file_proposal(unit, finding, edits, hypothesis=hypothesis, imports=["bufio"])
