"""speedproof's own record of a pytest run, written as pytest reports each result.

It runs inside the target's interpreter, so it imports only the standard library and pytest.
speedproof's bootstrap (`judge/tests/python_tests.py`) imports it and calls `main`, which registers
a `Recorder` before pytest reads any conftest (`pytest.main(..., plugins=[...])`); the judge then
compares its record with pytest's JUnit report and the process's exit status (docs/adr/0033).
One JSON object a line, each appended (one `write` unless a signal splits it) to the pipe the
judge reads as it is written (`judge/tests/record_channel.py`), so what was recorded before a
process vanished is still there, and nothing written can be taken back:

    {"event": "collected", "count": 4}
    {"event": "raw", "id": "tests/test_a.py::test_x", "when": "call"}
    {"event": "report", "id": "tests/test_a.py::test_x", "when": "call", "outcome": "failed",
     "message": "..."}
    {"event": "harness", "entries": ["hook pytest_runtest_makereport: ...", "item ..."]}
    {"event": "altered", "what": "_pytest.python.Function.runtest was replaced"}
    {"event": "finished", "exitstatus": 1}

`harness` (after collection) lists the hook implementations and item classes, which the judge
compares with the baseline's run; `altered` names a change to pytest's machinery seen while the
tests ran (`speedproof_machinery`, docs/adr/0062). `raw` marks a phase that failed as pytest
first built its report, before any other plugin's wrapper could change it; `report` is the
outcome as reported to every plugin (the JUnit writer among them); `finished` is written last,
when the session ends.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING or __package__:
    # Imported as part of speedproof (its type check, an import of every module).
    from speedproof.judge.tests.pytest_record import speedproof_machinery as machinery
else:
    # Loaded by pytest as a top-level module from the folder the bootstrap showed, like this one.
    import speedproof_machinery as machinery

# Bound now, before any code under test runs: a test that replaces `os.write` or `json.dumps`
# does not reach the record.
_WRITE, _DUMPS = os.write, json.dumps

# One failing test's output, as speedproof keeps it (base.FAILURE_LIMIT).
MESSAGE_LIMIT = 4_000


def _message(report: pytest.TestReport | pytest.CollectReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])  # (path, line, reason) of a skip
    return report.longreprtext[-MESSAGE_LIMIT:]


def outcome_of(report: pytest.TestReport) -> str:
    """passed / failed / skipped / error, as a JUnit report counts a test's phase."""
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return "skipped" if report.skipped else "passed"


def _inside(entry: str, tree: Sequence[str]) -> bool:
    real = os.path.realpath(entry or ".")
    return any(real == t or real.startswith(t.rstrip("/") + "/") for t in tree)


def load_installed(pluginmanager: pytest.PytestPluginManager, tree: Sequence[str]) -> None:
    """The plugins pytest's autoload would load, found with the tree's folders off sys.path:
    a `*.dist-info` in the tree never names one (docs/adr/0062). The run's environment turns
    pytest's own autoload off (PYTEST_DISABLE_PLUGIN_AUTOLOAD)."""
    real = [os.path.realpath(t) for t in tree]
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if not _inside(p, real)]
    try:
        pluginmanager.load_setuptools_entrypoints("pytest11")
    finally:
        sys.path[:] = saved


class Recorder:
    """Appends each event to `path` through a descriptor of its own, opened now; with `only`,
    the session runs just the tests of those node ids (a re-run of suspects). `tree` are the
    folders of the tree under test, kept off sys.path while installed plugins load."""

    def __init__(
        self, path: str, only: Sequence[str] | None = None, tree: Sequence[str] = ()
    ) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        self._fd = os.open(path, flags, 0o600)
        self._only = None if only is None else frozenset(only)
        self._tree = tuple(tree)
        self._classes: frozenset[type] = frozenset()
        self._hooks: tuple[tuple[str, Any], ...] = ()
        self._hook_entries: list[str] = []
        self._said: set[str] = set()

    def _write(self, **event: Any) -> None:
        data = (_DUMPS(event) + "\n").encode()
        while data:  # a pipe may take a long line in parts, if a signal interrupts
            data = data[_WRITE(self._fd, data) :]

    def _altered(self, found: Sequence[str]) -> None:
        """Each change to pytest's machinery, written once, as soon as it is seen."""
        for what in found:
            if what not in self._said:
                self._said.add(what)
                self._write(event="altered", what=what)

    def _check(self, pluginmanager: pytest.PytestPluginManager) -> None:
        found = [f"{name} was replaced" for name in machinery.replaced()]
        if self._hooks and machinery.hook_snapshot(pluginmanager) != self._hooks:
            now = [e for e in machinery.harness(pluginmanager, ()) if e.startswith("hook ")]
            added = sorted(set(now) - set(self._hook_entries))
            gone = sorted(set(self._hook_entries) - set(now))
            found.append(f"hook implementations changed after collection: +{added} -{gone}")
        self._altered(found)

    # First, before pytest parses its arguments, so `-p no:NAME` still unloads one.
    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_parse(
        self, pluginmanager: pytest.PytestPluginManager, args: list[str]
    ) -> None:
        load_installed(pluginmanager, self._tree)

    # A module that fails to import is one error, and one skipped as a whole (`allow_module_level`)
    # one skip, under its own path: the JUnit writer records both as test cases too.
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.passed:
            return
        outcome = "error" if report.failed else "skipped"
        self._write(
            event="report",
            id=report.nodeid,
            when="collect",
            outcome=outcome,
            message=_message(report),
        )

    # Last, after -k, -m and conftests chose: the node ids are those this plugin recorded on the
    # full run, so they match whatever the user's arguments (rootdir, ini overrides) made them,
    # where node ids given back to pytest as paths would be read relative to the working folder.
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self._only is None:
            return
        dropped = [item for item in items if item.nodeid not in self._only]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item.nodeid in self._only]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._write(event="collected", count=len(session.items))
        # What the harness is once the target's modules are imported, for the judge to compare
        # with the baseline's, and for this run's later checks to compare with.
        pluginmanager = session.config.pluginmanager
        entries = machinery.harness(pluginmanager, session.items)
        self._write(event="harness", entries=entries)
        self._classes = frozenset(type(item) for item in session.items)
        self._hooks = machinery.hook_snapshot(pluginmanager)
        self._hook_entries = [e for e in entries if e.startswith("hook ")]
        self._check(pluginmanager)

    # Innermost of the wrappers registered before it: it sees the report pytest built from the
    # test's own exception, before a wrapper further out (a conftest's, say) could rewrite it.
    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        self._check(item.config.pluginmanager)
        self._altered(machinery.item_problems(item, self._classes))
        made = yield
        report = made.get_result()
        if report.failed:
            self._write(event="raw", id=report.nodeid, when=report.when)

    # Before the JUnit writer, which is an ordinary hook: what it is told, this saw first.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = outcome_of(report)
        message = "" if outcome == "passed" else _message(report)
        self._write(
            event="report", id=report.nodeid, when=report.when, outcome=outcome, message=message
        )

    # Last, so the status recorded is the one `pytest.main` is about to return.
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._check(session.config.pluginmanager)
        self._write(event="finished", exitstatus=int(session.exitstatus))


def main(spec: dict[str, Any]) -> int:
    """pytest's session with the recorder registered first; its exit status."""
    recorder = Recorder(spec["record"], spec["only"], spec.get("path", ()))
    return int(pytest.main(spec["args"], plugins=[recorder]))
