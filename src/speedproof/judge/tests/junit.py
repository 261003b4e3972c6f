"""pytest's JUnit XML report: per-test outcomes, pytest's node ids, and where it disagrees with
speedproof's record of the same run (docs/adr/0033)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from speedproof.ground.toolchain import FAILURE_LIMIT, Outcome, clip
from speedproof.judge.tests.run_record import RANK, Record, names

_CHILD: dict[str, Outcome] = {"skipped": "skipped", "failure": "failed", "error": "error"}


def _module_of(path: str) -> str:
    """pytest's dotted name for a test file, as its JUnit `classname` starts."""
    return re.sub(r"\.py$", "", path.replace("/", "."))


def junit_id(path: str | None, classname: str, name: str) -> str:
    """A pytest node id (`tests/test_x.py::TestClass::test_name[param]`) from a JUnit case.

    pytest writes `classname` as the file's dotted path plus the classes; with the `file`
    attribute (junit_family=xunit1) the two can be told apart exactly. A module that failed to
    import is reported with its module path as the name, and gets the file's path as its id.
    """
    if not path:
        return f"{classname}::{name}" if classname else name
    module = _module_of(path)
    if not classname and name == module:
        return path
    if classname == module:
        classes: list[str] = []
    elif classname.startswith(module + "."):
        classes = classname[len(module) + 1 :].split(".")
    else:
        classes = [classname] if classname else []
    return "::".join([path, *classes, name])


def _case_outcome(case: ElementTree.Element) -> tuple[Outcome, str]:
    outcome: Outcome = "passed"
    said = []
    for child in case:
        found = _CHILD.get(child.tag)
        if found is None:
            continue
        said.append(" ".join(filter(None, [child.get("message"), child.text])))
        if RANK[found] > RANK[outcome]:
            outcome = found
    return outcome, "\n".join(said)


def _junit_root(report: bytes) -> ElementTree.Element:
    try:
        root = ElementTree.fromstring(report)
    except ElementTree.ParseError as exc:
        raise ValueError(f"the JUnit report is not XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the JUnit report's root is <{root.tag}>, not <testsuites>")
    return root


def parse_junit(report: bytes) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Per-test outcomes and failure messages from a JUnit XML report; ValueError if unreadable."""
    root = _junit_root(report)
    outcomes: dict[str, Outcome] = {}
    failures: dict[str, str] = {}
    for case in root.iter("testcase"):
        test_id = junit_id(case.get("file"), case.get("classname", ""), case.get("name", ""))
        outcome, said = _case_outcome(case)
        if test_id in outcomes and RANK[outcomes[test_id]] >= RANK[outcome]:
            continue
        outcomes[test_id] = outcome
        if outcome != "passed":
            failures[test_id] = clip(said, FAILURE_LIMIT)
    return outcomes, failures


def junit_key(node_id: str) -> tuple[str, str]:
    """The (`classname`, `name`) pytest's JUnit writer gives a node id (its own mangling)."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = _module_of(names[0])
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def junit_cases(report: bytes) -> dict[tuple[str, str], Outcome]:
    """Each case's worst outcome keyed by (`classname`, `name`); ValueError if unreadable."""
    root = _junit_root(report)
    cases: dict[tuple[str, str], Outcome] = {}
    for case in root.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        outcome, _ = _case_outcome(case)
        if key not in cases or RANK[outcome] > RANK[cases[key]]:
            cases[key] = outcome
    return cases


def report_problems(record: Record, cases: dict[tuple[str, str], Outcome]) -> list[str]:
    """Tests whose outcome in the JUnit report is not the one pytest reported as it ran."""
    recorded: dict[tuple[str, str], tuple[str, Outcome]] = {}
    for test_id, outcome in record.outcomes.items():
        recorded[junit_key(test_id)] = (test_id, outcome)
    differ = [
        f"{test_id} ({outcome}, the JUnit report says {cases.get(key, 'nothing')})"
        for key, (test_id, outcome) in recorded.items()
        if cases.get(key) != outcome
    ]
    extra = [".".join(filter(None, key)) for key in cases if key not in recorded]
    problems = []
    if differ:
        problems.append(f"the JUnit report disagrees with what pytest reported: {names(differ)}")
    if extra:
        problems.append(f"the JUnit report has tests pytest never reported: {names(extra)}")
    if record.turned:
        problems.append(
            "a plugin turned failures into passes after pytest built the report: "
            + names(sorted(record.turned))
        )
    return problems
