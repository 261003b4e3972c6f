"""Python constructs a candidate may not add, read with the standard library's `ast`.

Three kinds (docs/adr/0060):

- harness-probe: code that asks whether a test harness runs it, so it can take the correct path
  only there. An import of a harness (`pytest`, `_pytest`, `unittest`, `nose`, `doctest`); any
  string naming one (`"_pytest" in sys.modules`, `os.environ["PYTEST_CURRENT_TEST"]`,
  `find_spec("pytest")`, `sys.argv[0].endswith("py.test")`); and any look at the call stack or
  the tracer (`inspect.stack()`, `sys._getframe`, `frame.f_back`, `sys.gettrace()`), which is how
  a caller's test file is found. A heuristic: a name built at run time (`"_py" + "test"`) is out
  of its reach.
- harness-plugin: a `pytest_plugins` declaration or a `pytest_*` hook function.
- code-as-data: a way to run code that is not source: `marshal`, building code or function
  objects (`types.CodeType`, `__code__`), `exec`/`eval`/`compile` of anything but a literal, the
  import machinery's hooks (`sys.meta_path`, `sys.path_hooks`), byte-code loaders
  (`SourcelessFileLoader`, `importlib._bootstrap_external`, `zipimport`, a `.pyc` name).

Names are matched as written, whether as a name, an attribute, an import or a string
(`getattr(sys, "meta_path")`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from speedproof.judge.guard.finding import CodeRule, Finding, quote

HARNESS_MODULES = frozenset({"pytest", "_pytest", "unittest", "nose", "nose2", "doctest"})
# Any text naming a harness: `pytest`, `py.test`, `_pytest`, `PYTEST_CURRENT_TEST`, and a
# harness module name standing alone or dotted (`unittest.mock`).
_HARNESS_TEXT = re.compile(r"(?i)py\.?test|^(unittest|nose2?|doctest)(\.|$)")
STACK_NAMES = frozenset(
    {
        "_getframe",
        "_current_frames",
        "f_back",
        "currentframe",
        "getouterframes",
        "getinnerframes",
        "extract_stack",
        "walk_stack",
        "gettrace",
        "getprofile",
    }
)
CODE_NAMES = frozenset(
    {
        "marshal",
        "CodeType",
        "FunctionType",
        "__code__",
        "meta_path",
        "path_hooks",
        "path_importer_cache",
        "SourcelessFileLoader",
        "_bootstrap_external",
        "_frozen_importlib_external",
        "zipimport",
    }
)
RUNNERS = frozenset({"exec", "eval", "compile"})
PLUGIN_NAME = "pytest_plugins"


def python_findings(text: str) -> list[Finding]:
    """Every construct of the three kinds in `text`; one `unparsable-code` finding when the
    file cannot be parsed (what cannot be read cannot be cleared)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return [Finding("unparsable-code", line, line, quote(f"{type(exc).__name__}: {exc}"))]
    docstrings = _docstrings(tree)
    runners = _Runners(_rebound_runners(tree), _callees(tree))
    found: list[Finding] = []
    for node in ast.walk(tree):
        if node in docstrings:
            continue
        for rule in _rules(node, runners):
            found.append(_finding(rule, node, text))
    return found


@dataclass(frozen=True)
class _Runners:
    """What tells a code runner's use apart: the names rebound by imports, and the nodes
    (by `id`) that are the function of some call."""

    rebound: frozenset[str]
    callees: frozenset[int]


def _callees(tree: ast.Module) -> frozenset[int]:
    return frozenset(id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call))


def _finding(rule: CodeRule, node: ast.AST, text: str) -> Finding:
    line = getattr(node, "lineno", 1)
    end = getattr(node, "end_lineno", None) or line
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        end = line  # a hook is its `def` line, not the body an edit may have touched
    # The whole line, as a reader finds it in the file: `if "_pytest" in sys.modules:`.
    lines = text.splitlines()
    said = lines[line - 1] if 0 < line <= len(lines) else ""
    return Finding(rule, line, end, quote(said))


def _docstrings(tree: ast.Module) -> set[ast.AST]:
    """String statements (docstrings and their like): text about the code, never run."""
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _rebound_runners(tree: ast.Module) -> frozenset[str]:
    """`exec`, `eval`, `compile` names a `from M import` binds to something else
    (`from re import compile`): calling those runs no code."""
    return frozenset(
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module not in ("builtins", None)
        for alias in node.names
        if (alias.asname or alias.name) in RUNNERS
    )


def _rules(node: ast.AST, runners: _Runners) -> Iterator[CodeRule]:
    names = list(_names_written(node))
    if any(name == PLUGIN_NAME for name in names) or _is_hook(node):
        yield "harness-plugin"
    elif any(_HARNESS_TEXT.search(name) for name in names if not name.startswith(PLUGIN_NAME)):
        yield "harness-probe"
    if any(name in STACK_NAMES for name in names) or _is_inspect_stack(node):
        yield "harness-probe"
    if any(name in CODE_NAMES or name.endswith((".pyc", ".pyo")) for name in names):
        yield "code-as-data"
    if _runs_non_literal(node, runners):
        yield "code-as-data"


def _names_written(node: ast.AST) -> Iterator[str]:
    """The names this one node writes: an identifier, an attribute, an import, a string."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Import):
        for alias in node.names:
            yield from alias.name.split(".")
    elif isinstance(node, ast.ImportFrom):
        yield from (node.module or "").split(".")
        yield from (alias.name for alias in node.names)


def _is_hook(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    return node.name.startswith("pytest_")


def _is_inspect_stack(node: ast.AST) -> bool:
    """`inspect.stack` and `inspect.trace`: the caller's frames, file names included."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr in ("stack", "trace")
        and isinstance(node.value, ast.Name)
        and node.value.id == "inspect"
    )


def _runner_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None
    return func.attr if func.value.id in ("builtins", "__builtins__") else None


def _runs_non_literal(node: ast.AST, runners: _Runners) -> bool:
    """`exec(x)`, `eval(x)`, `compile(x, ...)` where `x` is not a string literal; and any use of
    `exec` or `eval` other than a call (`run = exec`, `getattr(builtins, "exec")`)."""
    if isinstance(node, ast.Constant) and node.value in ("exec", "eval"):
        return True
    if isinstance(node, ast.Name | ast.Attribute) and id(node) not in runners.callees:
        name = _runner_name(node)
        return name in ("exec", "eval") and name not in runners.rebound
    if isinstance(node, ast.Call):
        name = _runner_name(node.func)
        if name not in RUNNERS or name in runners.rebound:
            return False
        first = node.args[0] if node.args else None
        return not (isinstance(first, ast.Constant) and isinstance(first.value, str | bytes))
    return False
