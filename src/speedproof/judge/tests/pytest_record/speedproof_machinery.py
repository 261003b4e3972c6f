"""Whether pytest's machinery is still pytest's own: a check speedproof's plugin runs in-process.

Candidate code runs in the process that reports: a package imported at collection can wrap
`Function.runtest` or `CallInfo.from_call` and swallow every assertion failure, and the record,
the JUnit report and the exit status then agree on a lie. This module is imported with
speedproof's plugin, before pytest reads any conftest or the tree is on sys.path, so what it
captures is pytest's own; `speedproof_record` asks it, after collection, before each report and
at the session's end, what was replaced since (docs/adr/0062).

What it looks at:

* `replaced()`: the runner functions, report constructors and outcome helpers pytest runs a test
  through, by identity with what they were at import (class attributes as stored, so a
  classmethod re-wrapped around the same function is still a replacement).
* `item_problems(item, known)`: an item whose class is not one collection produced, or whose
  instance carries its own `runtest`.
* `harness(pluginmanager, items)`: every registered hook implementation, and every item class
  with the `runtest` it runs, as entries the judge compares with the baseline's run.
* `hook_snapshot(pluginmanager)`: the hook implementations by identity, compared before each
  report with those registered when collection finished.

Its limit: this is code in the candidate's own process. Code written against it can replace the
checker, reach into its closures, or forge the record's pipe; what it stops is the swallowing
that works without knowing speedproof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import pytest

_runner, _python, _reports = _pytest.runner, _pytest.python, _pytest.reports
# Every function a test's outcome passes through on its way to a report.
_WATCHED: tuple[tuple[Any, str], ...] = (
    *((_runner, n) for n in ("pytest_runtest_protocol", "runtestprotocol", "call_and_report")),
    *((_runner, n) for n in ("pytest_runtest_call", "pytest_runtest_makereport")),
    *((_runner, n) for n in ("pytest_runtest_setup", "pytest_runtest_teardown")),
    (_runner, "check_interactive_exception"),
    (_runner.CallInfo, "from_call"),
    (_runner.CallInfo, "__init__"),
    (_python, "pytest_pyfunc_call"),
    *((_python.Function, n) for n in ("runtest", "setup", "_getobj", "__init__")),
    (_python.PyobjMixin, "obj"),
    (_reports.TestReport, "from_item_and_call"),
    (_reports.TestReport, "__init__"),
    *((_reports.BaseReport, n) for n in ("passed", "failed", "skipped")),
    *((_pytest.skipping, n) for n in ("pytest_runtest_makereport", "pytest_runtest_call")),
    *((_pytest.skipping, n) for n in ("evaluate_xfail_marks", "evaluate_skip_marks")),
    *((pytest, n) for n in ("fail", "skip", "xfail", "raises", "approx")),
)


def _attribute(owner: Any, name: str) -> Any:
    """A class attribute as stored (a classmethod, a property), a module's as it is."""
    if isinstance(owner, type):
        return vars(owner).get(name)
    return getattr(owner, name, None)


def _label(owner: Any, name: str) -> str:
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__qualname__}.{name}"
    return f"{owner.__name__}.{name}"


def _name(function: Any) -> str:
    module = getattr(function, "__module__", None) or "?"
    return f"{module}.{getattr(function, '__qualname__', type(function).__qualname__)}"


def _make_replaced(
    original: tuple[tuple[Any, str, Any], ...],
    attribute: Callable[[Any, str], Any] = _attribute,
    label: Callable[[Any, str], str] = _label,
) -> Callable[[], list[str]]:
    # A closure over what import found: rebinding this module's globals changes nothing here.
    def replaced() -> list[str]:
        return [label(o, n) for o, n, was in original if attribute(o, n) is not was]

    return replaced


replaced = _make_replaced(
    tuple((o, n, _attribute(o, n)) for o, n in _WATCHED if _attribute(o, n) is not None)
)


def item_problems(item: Any, known: frozenset[type]) -> list[str]:
    """What about one item was changed after collection: its class, or its own `runtest`."""
    # Named by class and function, not by test: each is written once however many items.
    found = []
    if type(item) not in known:
        found.append(f"items became {_name(type(item))} after collection")
    if "runtest" in vars(item):
        found.append(f"items carry their own runtest, {_name(vars(item)['runtest'])}")
    return found


def _implementations(pluginmanager: Any) -> Iterable[tuple[str, Any]]:
    for name in sorted(vars(pluginmanager.hook)):
        caller = getattr(pluginmanager.hook, name)
        if hasattr(caller, "get_hookimpls"):
            for impl in caller.get_hookimpls():
                yield name, impl


def harness(pluginmanager: Any, items: Iterable[Any]) -> list[str]:
    """Hook implementations and item classes, one entry each, as the judge compares them."""
    entries = []
    for name, impl in _implementations(pluginmanager):
        flags = [f for f in ("hookwrapper", "wrapper", "tryfirst", "trylast") if getattr(impl, f)]
        entries.append(f"hook {name}: {_name(impl.function)} ({', '.join(flags) or 'plain'})")
    for kind in sorted({type(item) for item in items}, key=_name):
        entries.append(f"item {_name(kind)} runs {_name(getattr(kind, 'runtest', None))}")
    return entries


def hook_snapshot(pluginmanager: Any) -> tuple[tuple[str, Any], ...]:
    """The hook implementations by identity, cheap enough to take before every report."""
    return tuple((name, impl.function) for name, impl in _implementations(pluginmanager))
