"""Python: byte-compile to prove the source parses, run with a pinned environment, test with pytest.

The build is `python -m compileall -q` with PYTHONPYCACHEPREFIX pointing into the build folder,
so a syntax error fails the candidate at the build gate and the worktree stays exactly what git
checked out. Programs run with PYTHONHASHSEED=0 (set iteration order is then the same for
baseline and candidate, so behaviour is comparable) and PYTHONDONTWRITEBYTECODE=1.

pytest's results are read from its JUnit XML report, never from its console text: a report that
is missing or unreadable means the tests did not run, never that they passed.
"""

from __future__ import annotations

import functools
import re
import uuid
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.errors import InfrastructureError, ManifestError
from speedproof.manifest import Manifest
from speedproof.measure.process import ProcessResult
from speedproof.toolchains.base import (
    FAILURE_LIMIT,
    BuildResult,
    Context,
    Outcome,
    TestRun,
    Tree,
    clip,
    probe,
    process_log,
    resolve_interpreter,
)

# Worst first: a test case with several results (a failure, then an error at teardown) keeps the
# worst, and so does a test id that appears twice in one report.
_RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_CHILD: dict[str, Outcome] = {"skipped": "skipped", "failure": "failed", "error": "error"}
# pytest: 0 all passed, 1 some failed, 5 nothing collected. 2 (interrupted), 3 (internal error)
# and 4 (usage error) leave no complete report, whatever file they wrote.
_PYTEST_COMPLETE = (0, 1, 5)


@functools.cache
def _probe_python(interpreter: Path) -> str:
    return probe([str(interpreter), "-I", "-c", "import sys; print(sys.version.split()[0])"])


@functools.cache
def _probe_pytest(interpreter: Path) -> str | None:
    try:
        return probe([str(interpreter), "-I", "-c", "import pytest; print(pytest.__version__)"])
    except InfrastructureError:
        return None


@dataclass(frozen=True)
class PythonTool:
    interpreter: Path
    chosen_by: str
    version: str

    @classmethod
    def for_manifest(cls, manifest: Manifest) -> PythonTool:
        interpreter, chosen_by = resolve_interpreter(manifest)
        return cls(interpreter, chosen_by, _probe_python(interpreter))

    def versions(self) -> dict[str, str]:
        return {
            "python": self.version,
            "python_interpreter": str(self.interpreter),
            "python_chosen_by": self.chosen_by,
        }


def source_roots(manifest: Manifest, tree: Tree) -> list[Path]:
    """The manifest's source roots inside this tree; one that escapes the worktree is refused."""
    roots = []
    for name in manifest.target.source_roots:
        root = (tree.root / name).resolve()
        if not root.is_relative_to(tree.worktree):
            raise ManifestError(f"source root {name!r} lies outside the repository")
        roots.append(root)
    return roots


def python_env(context: Context, tree: Tree) -> dict[str, str]:
    roots = source_roots(context.manifest, tree)
    return context.env(
        {
            "PYTHONPATH": ":".join(str(r) for r in roots),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )


@dataclass(frozen=True)
class PythonBuilder:
    context: Context
    tool: PythonTool

    def versions(self) -> dict[str, str]:
        return self.tool.versions()

    def build(self, tree: Tree) -> BuildResult:
        target = self.context.manifest.target
        roots = source_roots(self.context.manifest, tree)
        missing = [str(r) for r in roots if not r.exists()]
        if target.script and not (tree.root / target.script).is_file():
            missing.append(str(tree.root / target.script))
        if missing:
            return BuildResult(False, None, f"not found: {', '.join(missing)}\n", 0.0, ())
        argv = (str(self.tool.interpreter), "-m", "compileall", "-q", *(str(r) for r in roots))
        # The byte-code goes to a throwaway prefix: the build proves the source compiles and
        # leaves no __pycache__ folder in the worktree.
        env = self.context.env({"PYTHONPYCACHEPREFIX": str(tree.out / "pycache")})
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=(tree.worktree, tree.out),
            env=env,
            timeout_s=self.context.build_timeout_s,
        )
        log = process_log(result)
        if not result.ok:
            return BuildResult(False, None, log, result.wall_s, (argv,))
        interpreter = str(self.tool.interpreter)
        if target.module:
            run: tuple[str, ...] = (interpreter, "-m", target.module)
        else:
            run = (interpreter, str(tree.root / str(target.script)))
        program = self.context.program(tree, run, python_env(self.context, tree))
        return BuildResult(True, program, log, result.wall_s, (argv,))


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
        if _RANK[found] > _RANK[outcome]:
            outcome = found
    return outcome, "\n".join(said)


def parse_junit(report: bytes) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Per-test outcomes and failure messages from a JUnit XML report; ValueError if unreadable."""
    try:
        root = ElementTree.fromstring(report)
    except ElementTree.ParseError as exc:
        raise ValueError(f"the JUnit report is not XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the JUnit report's root is <{root.tag}>, not <testsuites>")
    outcomes: dict[str, Outcome] = {}
    failures: dict[str, str] = {}
    for case in root.iter("testcase"):
        test_id = junit_id(case.get("file"), case.get("classname", ""), case.get("name", ""))
        outcome, said = _case_outcome(case)
        if test_id in outcomes and _RANK[outcomes[test_id]] >= _RANK[outcome]:
            continue
        outcomes[test_id] = outcome
        if outcome != "passed":
            failures[test_id] = clip(said, FAILURE_LIMIT)
    return outcomes, failures


def _read_report(
    result: ProcessResult, report: Path, timeout_s: float
) -> tuple[dict[str, Outcome], dict[str, str], str]:
    """Outcomes, failure messages, and why there are none when the run did not complete."""
    if result.timed_out:
        return {}, {}, f"pytest took longer than tests.timeout_s = {timeout_s:g} s"
    if result.exit_code not in _PYTEST_COMPLETE:
        return {}, {}, f"pytest stopped with exit code {result.exit_code}: {result.tail(1500)}"
    try:
        outcomes, failures = parse_junit(report.read_bytes())
    except (OSError, ValueError) as exc:
        return {}, {}, f"no readable JUnit report ({exc}): {result.tail(1500)}"
    return outcomes, failures, ""


def _options(args: Sequence[str]) -> list[str]:
    """pytest options from `[tests] args` (give values with `=`), without the paths."""
    return [a for a in args if a.startswith("-")]


@dataclass(frozen=True)
class PytestTests:
    context: Context
    tool: PythonTool

    def versions(self) -> dict[str, str]:
        return {**self.tool.versions(), "pytest": _probe_pytest(self.tool.interpreter) or "none"}

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        interpreter = str(self.tool.interpreter)
        if _probe_pytest(self.tool.interpreter) is None:
            raise InfrastructureError(
                f"pytest is not installed for {interpreter}: install it "
                f"({interpreter} -m pip install pytest) or set [target] interpreter"
            )
        args = list(self.context.manifest.tests.args)
        selection = args if only is None else [*_options(args), *only]
        report = tree.out / "reports" / f"pytest-{uuid.uuid4().hex}.xml"
        report.parent.mkdir(parents=True, exist_ok=True)
        argv: tuple[str, ...] = (interpreter, "-m", "pytest", "-p", "no:cacheprovider")
        argv += (f"--rootdir={tree.root}",)
        # Collection errors in one module must not stop the others: the gate is relative to
        # the baseline, and a module that already fails to import there is simply not counted.
        argv += ("--continue-on-collection-errors", "-o", "junit_family=xunit1")
        argv += (f"--junitxml={report}", "-q", *selection)
        timeout_s = self.context.manifest.tests.timeout_s
        result = self.context.run(
            argv,
            cwd=tree.root,
            writable=(tree.worktree, tree.out),
            env=python_env(self.context, tree),
            timeout_s=timeout_s,
        )
        outcomes, failures, note = _read_report(result, report, timeout_s)
        report.unlink(missing_ok=True)  # read once; the outcomes and the log are what we keep
        ran = not note
        if ran and result.exit_code == 5:
            note = "pytest collected no tests"
        return TestRun(
            outcomes=outcomes,
            ran=ran,
            log=clip(process_log(result)),
            duration_s=result.wall_s,
            command=argv,
            timed_out=result.timed_out,
            note=note,
            failures=failures,
        )
