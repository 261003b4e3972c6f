"""Python: byte-compile to prove the source parses, run with a pinned environment, test with pytest.

The build is `python -m compileall -q` with PYTHONPYCACHEPREFIX pointing into the build folder,
so a syntax error fails the candidate at the build gate and the worktree stays exactly what git
checked out. Programs run with PYTHONHASHSEED=0 (set iteration order is then the same for
baseline and candidate, so behaviour is comparable) and PYTHONDONTWRITEBYTECODE=1.

pytest runs isolated from start-up hooks: `python -s` with no PYTHONPATH and a small bootstrap
that sets sys.path itself, so no `sitecustomize.py`, `usercustomize.py` or `.pth` file in the
tree runs before pytest. Outcomes come from speedproof's own plugin (`pytest_record/`), loaded
before any conftest, and are cross-checked against pytest's JUnit XML report and the process's
exit status; where they disagree, the run says so in `tampered` (docs/adr/0033). A run that
stops with an exit status other than 0, 1 or 5 did not run, never passed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import uuid
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from speedproof.errors import InfrastructureError, ManifestError
from speedproof.manifest import Manifest
from speedproof.measure.process import ProcessResult
from speedproof.toolchains.base import (
    BAD,
    FAILURE_LIMIT,
    BuildResult,
    Context,
    Outcome,
    TestRun,
    Tree,
    clip,
    interpreter_named,
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
_NAMES_SHOWN = 20


@functools.cache
def _probe_python(interpreter: Path) -> str:
    return probe([str(interpreter), "-I", "-c", "import sys; print(sys.version.split()[0])"])


@functools.cache
def _probe_folders(interpreter: Path) -> tuple[Path, ...]:
    """The interpreter's installation and environment folders, which the sandbox must show."""
    said = probe(
        [
            str(interpreter),
            "-I",
            "-c",
            "import sys; print(sys.prefix); print(sys.base_prefix); print(sys.exec_prefix)",
        ]
    )
    found = [Path(line).resolve() for line in said.splitlines() if line.strip()]
    found += [hop.parent for hop in link_chain(interpreter)]
    return tuple(dict.fromkeys(f for f in found if f.is_dir() and f != Path("/")))


# Linux follows at most 40 links resolving one path (MAXSYMLINKS); a longer chain is a loop.
_MAX_HOPS = 40


def link_chain(path: Path) -> list[Path]:
    """`path` and every link it passes through to the real file, each with its folder resolved.

    A venv's `bin/python` may link to a Python that links on again (`~/bin/python3` -> pyenv's
    `python3.11`); inside the sandbox each hop must exist or exec fails with ENOENT, so the
    folder of every hop is shown, not only the last one's.
    """
    hops = [Path(path.parent.resolve(), path.name)]
    while hops[-1].is_symlink() and len(hops) <= _MAX_HOPS:
        hop = hops[-1]
        nxt = Path(os.path.normpath(hop.parent / os.readlink(hop)))
        hops.append(Path(nxt.parent.resolve(), nxt.name))
    return hops


# Run by the target interpreter (-I: no tree, no PYTHONPATH, no user site): the folders it imports
# from and every installed distribution, name==version.
_PACKAGES_PROBE = """\
import importlib.metadata, json, os, sys
folders = [p for p in sys.path if os.path.isdir(p)]
found = {f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()}
print(json.dumps({"folders": folders, "dists": sorted(found)}))
"""


@dataclass(frozen=True)
class _Installed:
    """What one probe of an interpreter's packages found, and the stamps it is good for."""

    folders: tuple[str, ...]
    stamp: tuple[tuple[str, int], ...]
    digest: str


# Per interpreter path; re-probed when the interpreter or an import folder changes mtime.
_INSTALLED: dict[Path, _Installed] = {}


def _stamp(interpreter: Path, folders: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """mtimes of the interpreter and its import folders: `pip install` adds a `.dist-info`
    folder (and usually a module) to site-packages, which changes that folder's mtime."""
    found = []
    for name in (str(interpreter), *folders):
        try:
            found.append((name, os.stat(name).st_mtime_ns))
        except OSError:
            found.append((name, -1))
    return tuple(found)


def _probe_installed(interpreter: Path) -> _Installed:
    said = probe([str(interpreter), "-I", "-c", _PACKAGES_PROBE])
    try:
        data = json.loads(said)
        folders, dists = [str(f) for f in data["folders"]], [str(d) for d in data["dists"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise InfrastructureError(f"{interpreter} listed its packages unreadably: {exc}") from exc
    digest = hashlib.sha256()
    for line in dists:
        digest.update(f"dist {line}\n".encode())
    # Modules copied in without metadata import just as well: each import folder's entries too.
    for folder in folders:
        names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        digest.update(f"folder {folder} {json.dumps(names)}\n".encode())
    return _Installed(tuple(folders), _stamp(interpreter, folders), digest.hexdigest())


def installed_digest(interpreter: Path) -> str:
    """A digest of what `interpreter` can import: its distributions (importlib.metadata
    name==version) and the entries of its import folders. Probed once per interpreter and
    again only when an mtime in its stamp changed (an install racing the probe by milliseconds
    could be missed until the next change; speedproof never installs while it judges)."""
    known = _INSTALLED.get(interpreter)
    if known is not None and _stamp(interpreter, known.folders) == known.stamp:
        return known.digest
    found = _probe_installed(interpreter)
    _INSTALLED[interpreter] = found
    return found.digest


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
    # Its prefixes (a venv and the installation it was made from), shown read-only.
    folders: tuple[Path, ...] = ()

    @classmethod
    def for_manifest(cls, manifest: Manifest) -> PythonTool:
        interpreter, chosen_by = resolve_interpreter(manifest)
        try:
            version = _probe_python(interpreter)
            folders = _probe_folders(interpreter)
        except InfrastructureError as exc:
            written = manifest.target.interpreter_written or str(interpreter)
            shown = interpreter_named(written, str(interpreter))
            raise InfrastructureError(
                f"{shown} cannot run ({exc}); recreate the venv or set [target] interpreter"
            ) from exc
        return cls(interpreter, chosen_by, version, folders)

    def versions(self) -> dict[str, str]:
        return {
            "python": self.version,
            "python_interpreter": str(self.interpreter),
            "python_chosen_by": self.chosen_by,
            # What the tests can import decides their outcomes as much as the version does.
            "python_packages": installed_digest(self.interpreter),
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
        # -I: a candidate's `compileall.py` beside the sources would otherwise shadow the
        # standard library's (`-m` puts the working folder first on sys.path) and run, with
        # the tree writable, at build time.
        # The byte-code goes to a throwaway prefix (-X: -I ignores PYTHONPYCACHEPREFIX): the
        # build proves the source compiles and leaves no __pycache__ folder in the worktree,
        # which the build may not write.
        argv: tuple[str, ...] = (str(self.tool.interpreter), "-I", "-X")
        argv += (f"pycache_prefix={tree.out / 'pycache'}", "-m", "compileall", "-q")
        argv += tuple(str(r) for r in roots)
        env = self.context.env()
        result = self.context.run(
            argv,
            cwd=tree.root,
            readable=(tree.worktree,),
            writable=(tree.out,),
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
        if test_id in outcomes and _RANK[outcomes[test_id]] >= _RANK[outcome]:
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
        if key not in cases or _RANK[outcome] > _RANK[cases[key]]:
            cases[key] = outcome
    return cases


@dataclass
class Record:
    """What speedproof's plugin (`pytest_record/speedproof_record.py`) saw of one run."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    # Tests a phase of which failed as pytest built the report and passed as it was reported.
    turned: set[str] = field(default_factory=set)
    collected: int | None = None
    exitstatus: int | None = None

    def add_report(self, test_id: str, outcome: Outcome, message: str) -> None:
        if test_id in self.outcomes and _RANK[self.outcomes[test_id]] >= _RANK[outcome]:
            return
        self.outcomes[test_id] = outcome
        if outcome != "passed":
            self.messages[test_id] = clip(message, FAILURE_LIMIT)


def read_record(text: str) -> Record:
    """The plugin's record from its JSON lines; ValueError if a line is not one of its events."""
    record = Record()
    raw: set[tuple[str, str]] = set()
    for line in text.splitlines():
        event = json.loads(line)
        kind = event["event"]
        if kind == "collected":
            record.collected = int(event["count"])
        elif kind == "finished":
            record.exitstatus = int(event["exitstatus"])
        elif kind == "raw":
            raw.add((str(event["id"]), str(event["when"])))
        elif kind == "report" and event["outcome"] in _RANK:
            test_id = str(event["id"])
            outcome = cast(Outcome, event["outcome"])
            record.add_report(test_id, outcome, str(event.get("message", "")))
            # Each failure pytest built is answered by the next report of that phase (a test's
            # subtests each send one); answered "passed", something rewrote it in between.
            phase = (test_id, str(event["when"]))
            if phase in raw and outcome == "passed":
                record.turned.add(test_id)
            raw.discard(phase)
        else:
            raise ValueError(f"not an event of speedproof's record: {line[:200]!r}")
    return record


def _names(ids: Sequence[str]) -> str:
    shown = sorted(ids)
    return ", ".join(shown[:_NAMES_SHOWN]) + (
        f" and {len(shown) - _NAMES_SHOWN} more" if len(shown) > _NAMES_SHOWN else ""
    )


def _status_problems(record: Record, exit_code: int) -> list[str]:
    """Where the session's end, the process's exit status and the outcomes disagree."""
    if record.exitstatus is None:
        return [f"pytest's session never finished, yet the process exited with {exit_code}"]
    problems = []
    if record.exitstatus != exit_code:
        problems.append(
            f"pytest finished with exit status {record.exitstatus} "
            f"but the process exited with {exit_code}"
        )
    bad = [i for i, o in record.outcomes.items() if o in BAD]
    if exit_code == 0 and bad:
        problems.append(f"exit status 0 with {len(bad)} failing: {_names(bad)}")
    if exit_code == 1 and not bad:
        problems.append("exit status 1 (tests failed) but no test failed")
    if exit_code == 5 and record.outcomes:
        problems.append(f"exit status 5 (no tests) but {len(record.outcomes)} tests reported")
    if record.collected is None:
        problems.append("pytest never reported what it collected")
    return problems


def _report_problems(record: Record, cases: dict[tuple[str, str], Outcome]) -> list[str]:
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
        problems.append(f"the JUnit report disagrees with what pytest reported: {_names(differ)}")
    if extra:
        problems.append(f"the JUnit report has tests pytest never reported: {_names(extra)}")
    if record.turned:
        problems.append(
            "a plugin turned failures into passes after pytest built the report: "
            + _names(sorted(record.turned))
        )
    return problems


@dataclass(frozen=True)
class _Read:
    """One pytest run read through both channels."""

    outcomes: dict[str, Outcome]
    failures: dict[str, str]
    note: str = ""
    collected: int | None = None
    tampered: tuple[str, ...] = ()
    checked: str = ""


def _read_run(result: ProcessResult, report: Path, record_path: Path, timeout_s: float) -> _Read:
    """Outcomes from speedproof's record, cross-checked against the JUnit report and the exit
    status; a run that did not complete has none and a note saying why."""
    if result.timed_out:
        return _Read({}, {}, f"pytest took longer than tests.timeout_s = {timeout_s:g} s")
    if result.exit_code not in _PYTEST_COMPLETE:
        return _Read(
            {}, {}, f"pytest stopped with exit code {result.exit_code}: {result.tail(1500)}"
        )
    try:
        record = read_record(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        missing = f"speedproof's record of the run is missing or unreadable ({exc})"
        return _Read({}, {}, missing, tampered=(missing,))
    problems = _status_problems(record, result.exit_code)
    try:
        problems += _report_problems(record, junit_cases(report.read_bytes()))
    except (OSError, ValueError) as exc:
        problems.append(f"the JUnit report is missing or unreadable ({exc})")
    bad = sum(1 for o in record.outcomes.values() if o in BAD)
    checked = (
        f"{len(record.outcomes)} outcomes recorded by speedproof's pytest plugin match the JUnit "
        f"report; exit status {result.exit_code} matches {bad} failing; "
        f"{record.collected} collected"
    )
    return _Read(
        outcomes=record.outcomes,
        failures=record.messages,
        note="pytest collected no tests" if result.exit_code == 5 else "",
        collected=record.collected,
        tampered=tuple(problems),
        checked="" if problems else checked,
    )


# Run as `python -s -c BOOTSTRAP SPEC`. The interpreter starts with no folder of the tree on
# sys.path (`-c` adds the working folder only after `site` ran), so `site` finds no
# sitecustomize, usercustomize or .pth of the tree. speedproof's plugin and pytest are imported
# next, before any folder of the tree joins sys.path (a tree's `pytest.py` or
# `speedproof_record.py` shadows neither); then the plugin's folder leaves sys.path and the tree's
# folders join it. Programs the tests start get PYTHONPATH = the source roots, as before: they
# import the target the way its CLI does, and cannot reach this process's report once written.
_BOOTSTRAP = """\
import json, os, sys
spec = json.loads(sys.argv[1])
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
sys.path.insert(0, spec["plugin"])
import speedproof_record
import pytest
sys.path.remove(spec["plugin"])
sys.path[:0] = spec["path"]
os.environ["PYTHONPATH"] = spec["children"]
recorder = speedproof_record.Recorder(spec["record"], spec["only"])
raise SystemExit(int(pytest.main(spec["args"], plugins=[recorder])))
"""
PLUGIN_FOLDER = Path(__file__).resolve().parent / "pytest_record"


def _kept(read: _Read, only: Sequence[str] | None) -> _Read:
    """A re-run's outcomes for the ids it asked for and the modules holding them: it collects the
    whole suite, so other modules' collection errors are reported too, and are not its answer."""
    if only is None:
        return read
    wanted = set(only)
    modules = {i.split("::", 1)[0] for i in only}
    outcomes = {i: o for i, o in read.outcomes.items() if i in wanted or i in modules}
    failures = {i: m for i, m in read.failures.items() if i in outcomes}
    return replace(read, outcomes=outcomes, failures=failures)


def _test_env(context: Context) -> dict[str, str]:
    """The test run's environment: the programs' fixed hash seed and no byte-code, but no
    PYTHONPATH at start-up (the bootstrap sets sys.path; one allowed through from the user's
    environment, if relative, would put the tree back on the start-up path). Not `-I` or `-E`:
    they would also drop PYTHONHASHSEED, and set order must stay the same on both sides."""
    env = context.env({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("PYTHONPATH", None)
    return env


@dataclass(frozen=True)
class PytestTests:
    context: Context
    tool: PythonTool

    def versions(self) -> dict[str, str]:
        return {**self.tool.versions(), "pytest": _probe_pytest(self.tool.interpreter) or "none"}

    def _argv(
        self, tree: Tree, only: Sequence[str] | None, report: Path, record: Path
    ) -> list[str]:
        args = ["-p", "no:cacheprovider", f"--rootdir={tree.root}"]
        # Collection errors in one module must not stop the others: the gate is relative to
        # the baseline, and a module that already fails to import there is simply not counted.
        args += ["--continue-on-collection-errors", "-o", "junit_family=xunit1"]
        # The user's arguments untouched, as pytest itself parses them (`-o name=value` may be
        # two tokens, `--rootdir` may move every node id); a re-run is chosen by node id inside
        # the session (`only`), never by rebuilding argv.
        args += [f"--junitxml={report}", "-q", *self.context.manifest.tests.args]
        roots = [str(r) for r in source_roots(self.context.manifest, tree)]
        spec = {
            "plugin": str(PLUGIN_FOLDER),
            "record": str(record),
            # Node ids as speedproof's plugin recorded them: the tests a re-run keeps.
            "only": None if only is None else list(only),
            # The rootdir first, as `python -m pytest` run there would have it.
            "path": list(dict.fromkeys([str(tree.root), *roots])),
            "children": ":".join(roots),
            "args": args,
        }
        # -s: no user site folder, whose usercustomize and .pth files would run at start-up.
        return [str(self.tool.interpreter), "-s", "-c", _BOOTSTRAP, json.dumps(spec)]

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        interpreter = str(self.tool.interpreter)
        if _probe_pytest(self.tool.interpreter) is None:
            raise InfrastructureError(
                f"pytest is not installed for {interpreter}: install it "
                f"({interpreter} -m pip install pytest) or set [target] interpreter"
            )
        stem = tree.out / "reports" / f"pytest-{uuid.uuid4().hex}"
        report, record = stem.with_suffix(".xml"), stem.with_suffix(".record")
        report.parent.mkdir(parents=True, exist_ok=True)
        argv = tuple(self._argv(tree, only, report, record))
        timeout_s = self.context.manifest.tests.timeout_s
        result = self.context.run(
            argv,
            cwd=tree.root,
            readable=(PLUGIN_FOLDER,),
            writable=(tree.worktree, tree.out),
            env=_test_env(self.context),
            timeout_s=timeout_s,
        )
        read = _kept(_read_run(result, report, record, timeout_s), only)
        # Read once; the outcomes and the log are what we keep.
        report.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
        return TestRun(
            outcomes=read.outcomes,
            ran=not result.timed_out and result.exit_code in _PYTEST_COMPLETE,
            log=clip(process_log(result)),
            duration_s=result.wall_s,
            command=argv,
            timed_out=result.timed_out,
            note=read.note,
            failures=read.failures,
            collected=read.collected,
            tampered=read.tampered,
            checked=read.checked,
        )
