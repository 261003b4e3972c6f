"""Python: byte-compile to prove the source parses, run with a pinned environment, test with pytest.

The build is `python -m compileall -q` with PYTHONPYCACHEPREFIX pointing into the build folder,
so a syntax error fails the candidate at the build gate and the worktree stays exactly what git
checked out. Programs run with PYTHONHASHSEED=0 (set iteration order is then the same for
baseline and candidate, so behaviour is comparable), PYTHONDONTWRITEBYTECODE=1, and that prefix,
so they read the byte-code the build made as an installed copy would (`pycache`, ADR 0061).

pytest runs isolated from start-up hooks (`python_tests`: `python -s`, no PYTHONPATH, a bootstrap
that sets sys.path itself). Outcomes come from speedproof's own plugin (`pytest_record/`), loaded
before any conftest, whose record comes back through a pipe (`record_channel`), and are
cross-checked against pytest's JUnit XML report (`junit`) and the process's exit status; where
they disagree, the run says so in `tampered` (docs/adr/0033). A run that stops with an exit
status other than 0, 1 or 5 did not run, never passed. The unittest runner, which shares all of
this but the JUnit report, is in `unittest_runner`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError, ManifestError
from speedproof.ground.toolchain import (
    BuildResult,
    Context,
    TestRun,
    Tree,
    interpreter_named,
    probe,
    process_log,
    resolve_interpreter,
)
from speedproof.judge.build.pycache import link_mirror, mirror, top_folders

# junit_id, junit_key, parse_junit and read_record are also imported by name from this module.
from speedproof.judge.tests.junit import junit_cases, report_problems
from speedproof.judge.tests.junit import junit_id as junit_id
from speedproof.judge.tests.junit import junit_key as junit_key
from speedproof.judge.tests.junit import parse_junit as parse_junit
from speedproof.judge.tests.python_tests import recorded_test_run
from speedproof.judge.tests.run_record import CrossCheck, Record, Recorded
from speedproof.judge.tests.run_record import read_record as read_record
from speedproof.link_paths import linked_folders
from speedproof.manifest import Manifest


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
    # A linked folder on the way (`.venv -> ../envs/x`) must exist where the path names it.
    found += linked_folders(interpreter)
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


def pycache_prefix(tree: Tree) -> Path:
    """Where the build puts the byte-code its runs read (`toolchains.pycache`)."""
    return tree.out / "pycache"


def python_env(context: Context, tree: Tree) -> dict[str, str]:
    """A built program's environment. Its runs read the byte-code the build made, as an
    installed copy would (docs/adr/0061), and write none: the tree and the build folder are
    read-only to them, and a write that failed would only cost time."""
    roots = source_roots(context.manifest, tree)
    return context.env(
        {
            "PYTHONPATH": ":".join(str(r) for r in roots),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPYCACHEPREFIX": str(pycache_prefix(tree)),
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
        # The runs' byte-code prefix leads to the interpreter's own byte-code first.
        mirrored = self._interpreter_byte_code(tree)
        # -I: a candidate's `compileall.py` beside the sources would otherwise shadow the
        # standard library's (`-m` puts the working folder first on sys.path) and run, with
        # the tree writable, at build time.
        # The byte-code goes to the build folder's prefix (-X: -I ignores PYTHONPYCACHEPREFIX),
        # where the runs read it: the build proves the source compiles and leaves no
        # __pycache__ folder in the worktree, which the build may not write. -B: compileall
        # writes what it compiles all the same; the modules it imports itself write nothing.
        argv: tuple[str, ...] = (str(self.tool.interpreter), "-I", "-B", "-X")
        argv += (f"pycache_prefix={pycache_prefix(tree)}", "-m", "compileall", "-q")
        argv += tuple(str(r) for r in roots)
        env = self.context.env()
        result = self.context.run(
            argv,
            cwd=tree.root,
            readable=(tree.worktree, mirrored),
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
        program = replace(program, readable=(*program.readable, mirrored))
        return BuildResult(True, program, log, result.wall_s, (argv,))

    def _interpreter_byte_code(self, tree: Tree) -> Path:
        """Link the build's prefix to the mirror of the interpreter's byte-code; the mirror."""
        interpreter = self.tool.interpreter
        digest = installed_digest(interpreter)
        folders = top_folders(_INSTALLED[interpreter].folders)
        try:
            mirrored = mirror(self.context.caches, interpreter, digest, folders)
            link_mirror(pycache_prefix(tree), mirrored, folders, tree.worktree.resolve())
        except OSError as exc:
            raise InfrastructureError(
                f"cannot link {interpreter}'s byte-code into the build folder: {exc}"
            ) from exc
        return mirrored


# The plugin lives with the rest of test running, in the sibling package judge/tests.
PLUGIN_FOLDER = Path(__file__).resolve().parents[1] / "tests" / "pytest_record"


def _kept(read: Recorded, only: Sequence[str] | None) -> Recorded:
    """A re-run's outcomes for the ids it asked for and the modules holding them: it collects the
    whole suite, so other modules' collection errors are reported too, and are not its answer."""
    if only is None:
        return read
    wanted = set(only)
    modules = {i.split("::", 1)[0] for i in only}
    outcomes = {i: o for i, o in read.outcomes.items() if i in wanted or i in modules}
    failures = {i: m for i, m in read.failures.items() if i in outcomes}
    return replace(read, outcomes=outcomes, failures=failures)


def _against_junit(report: Path) -> CrossCheck:
    """The record checked against pytest's own JUnit report of the same run."""

    def check(record: Record) -> tuple[list[str], str]:
        try:
            problems = report_problems(record, junit_cases(report.read_bytes()))
        except (OSError, ValueError) as exc:
            problems = [f"the JUnit report is missing or unreadable ({exc})"]
        said = (
            f"{len(record.outcomes)} outcomes recorded by speedproof's pytest plugin match the "
            "JUnit report"
        )
        return problems, said

    return check


@dataclass(frozen=True)
class PytestTests:
    context: Context
    tool: PythonTool

    def versions(self) -> dict[str, str]:
        return {**self.tool.versions(), "pytest": _probe_pytest(self.tool.interpreter) or "none"}

    def _spec(self, tree: Tree, only: Sequence[str] | None, report: Path) -> dict[str, Any]:
        args = ["-p", "no:cacheprovider", f"--rootdir={tree.root}"]
        # Collection errors in one module must not stop the others: the gate is relative to
        # the baseline, and a module that already fails to import there is simply not counted.
        args += ["--continue-on-collection-errors", "-o", "junit_family=xunit1"]
        # The user's arguments untouched, as pytest itself parses them (`-o name=value` may be
        # two tokens, `--rootdir` may move every node id); a re-run is chosen by node id inside
        # the session (`only`), never by rebuilding argv.
        args += [f"--junitxml={report}", "-q", *self.context.manifest.tests.args]
        return {
            "folder": str(PLUGIN_FOLDER),
            "runner": "speedproof_record",
            # Node ids as speedproof's plugin recorded them: the tests a re-run keeps.
            "only": None if only is None else list(only),
            "args": args,
        }

    def run_tests(self, tree: Tree, only: Sequence[str] | None = None) -> TestRun:
        interpreter = str(self.tool.interpreter)
        if _probe_pytest(self.tool.interpreter) is None:
            raise InfrastructureError(
                f"pytest is not installed for {interpreter}: install it "
                f"({interpreter} -m pip install pytest) or set [target] interpreter"
            )
        report = tree.out / "reports" / f"pytest-{uuid.uuid4().hex}.xml"
        report.parent.mkdir(parents=True, exist_ok=True)
        run = recorded_test_run(
            self.context,
            tree,
            self.tool.interpreter,
            source_roots(self.context.manifest, tree),
            self._spec(tree, only, report),
            runner="pytest",
            cross_check=_against_junit(report),
            kept=lambda read: _kept(read, only),
            names_modules=False,
        )
        # Read once; the outcomes and the log are what we keep.
        report.unlink(missing_ok=True)
        return run
