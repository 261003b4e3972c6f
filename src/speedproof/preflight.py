"""What `speedproof manifest validate` checks beyond the schema: that the manifest can work here.

The schema says a manifest is well formed; these checks say it names things that exist: every
workload input, the path-like arguments, the interpreter (it must start), the Python module or
script, the unittest runner's arguments (read by the interpreter's own unittest), the folders they
name and whether the test files they discover are protected from patches, a Go module's
dependencies (they must resolve offline, as the judge builds them), and the benchmark each
benchmark workload names (`bench.preflight`). Each problem names its manifest key, its line when
one is found, and a fix.

An `args` token is checked as a path when it is not an option (no leading `-`; a value given as
`--opt=value` is not checked, which is the way to pass a path-like value that is no file), holds
no placeholder (`{out}`, `{holdout}`), no space and no `://`, is not absolute, is not a declared
output file, and either contains `/` or ends in a common data suffix (`DATA_SUFFIXES`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from speedproof.bench.preflight import benchmark_problems, harnesses_needed
from speedproof.ground.errors import InfrastructureError, ManifestError
from speedproof.ground.git import repository_root
from speedproof.ground.sandbox import build_env
from speedproof.ground.toolchain import default_cache_dir, resolve_interpreter
from speedproof.judge.build.go import GoTool
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.tests.unittest_runner import UnittestArgs, read_unittest_args
from speedproof.manifest import PYTHON_RUNNERS, Manifest, Workload
from speedproof.manifest_loading import LoadedManifest
from speedproof.tomlpos import locate

# Suffixes of inputs a workload names without a folder (`words.txt`): text, tables, serialised
# data, archives and databases. A bare token without one (`--top`, `30`, `title`) is no path.
DATA_SUFFIXES = (
    ".txt", ".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".xml", ".yaml", ".yml", ".toml",
    ".log", ".md", ".html", ".dat", ".bin", ".parquet", ".sqlite", ".db", ".gz", ".bz2", ".xz",
    ".zst", ".zip", ".tar",
)  # fmt: skip
# `go list` of a module with a few hundred dependencies takes ~2 s warm; 120 s covers a cold disk.
_GO_LIST_TIMEOUT_S = 120.0
_SAID_LINES = 6


@dataclass(frozen=True)
class Problem:
    """One thing the manifest names that cannot work: where (schema location) and what to do."""

    loc: tuple[str | int, ...]
    message: str


def check(loaded: LoadedManifest) -> list[Problem]:
    """Every problem found; an empty list means the manifest can work in this tree."""
    manifest, root = loaded.manifest, loaded.root
    problems = [*_inputs(manifest, root), *_target(loaded)]
    if "go" in (manifest.target.language, manifest.tests.runner):
        problems += _go_dependencies(manifest, root)
    problems += [Problem(loc, message) for loc, message in benchmark_problems(manifest, root)]
    return problems


def describe(loaded: LoadedManifest, problems: Sequence[Problem]) -> str:
    """The problems as `manifest`'s schema errors read: file, line, key, then message."""
    source = str(loaded.path)
    lines = [f"{source}: {len(problems)} problem(s): the manifest cannot work as it stands"]
    for problem in problems:
        key = ".".join(str(part) for part in problem.loc)
        line = locate(loaded.text, problem.loc)
        where = f"line {line}" if line else "no line"
        lines.append(f"  {source}:{line or '?'}: `{key}` ({where}): {problem.message}")
    return "\n".join(lines)


def looks_like_path(token: str, outputs: Sequence[str] = ()) -> bool:
    """Whether a workload argument is read as a relative input path (the rule in the docstring)."""
    if not token or token.startswith("-") or token in outputs or os.path.isabs(token):
        return False
    if any(mark in token for mark in ("{", " ", "://")):
        return False
    return "/" in token or token.lower().endswith(DATA_SUFFIXES)


def _inputs(manifest: Manifest, root: Path) -> list[Problem]:
    outputs = manifest.behaviour.output_files
    problems: list[Problem] = []
    for index, workload in enumerate(manifest.workloads):
        problems += _declared_inputs(index, workload, root)
        for arg in workload.args:
            if looks_like_path(arg, outputs) and not (root / arg).exists():
                problems.append(
                    Problem(
                        ("workloads", index, "args"),
                        f"workload {workload.id!r}: argument {arg!r} looks like a path but "
                        f"{root / arg} does not exist; fix the path or add the file (a value "
                        "that is no file can be passed as --option=value)",
                    )
                )
    return problems


def _declared_inputs(index: int, workload: Workload, root: Path) -> list[Problem]:
    named = [("files", name) for name in workload.files]
    named += [("stdin", workload.stdin)] if workload.stdin else []
    return [
        Problem(
            ("workloads", index, key),
            f"workload {workload.id!r}: input {name!r} does not exist at {root / name}; "
            "fix the path or add the file to the repository",
        )
        for key, name in named
        if "{" not in name and not (root / name).exists()
    ]


def _target(loaded: LoadedManifest) -> list[Problem]:
    manifest, root = loaded.manifest, loaded.root
    if manifest.target.language != "python" and manifest.tests.runner not in PYTHON_RUNNERS:
        return []
    try:
        interpreter, _ = resolve_interpreter(manifest)
        _starts(interpreter)
    except InfrastructureError as exc:
        return [Problem(("target", "interpreter"), str(exc))]
    problems = _harnesses(manifest, interpreter)
    if manifest.target.language == "python":
        problems += _python_entry(manifest, root, interpreter)
    if manifest.tests.runner == "unittest":
        problems += _unittest(loaded, interpreter)
    return problems


def _run_python(interpreter: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`interpreter -I -c code`, run; InfrastructureError if it cannot even start."""
    try:
        return subprocess.run(
            [str(interpreter), "-I", "-c", code], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfrastructureError(
            f"interpreter {str(interpreter)!r} cannot run ({exc}); recreate the venv or set "
            "[target] interpreter"
        ) from exc


def _starts(interpreter: Path) -> None:
    done = _run_python(interpreter, "import sys")
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise InfrastructureError(
            f"interpreter {str(interpreter)!r} cannot run ({said[0]}); recreate the venv or "
            "set [target] interpreter"
        )


def _harnesses(manifest: Manifest, interpreter: Path) -> list[Problem]:
    """The harness each Python benchmark workload runs must import in the target's Python."""
    problems = []
    for index, module in harnesses_needed(manifest):
        if _run_python(interpreter, f"import {module}").returncode != 0:
            package = module.replace("_", "-")
            problems.append(
                Problem(
                    ("workloads", index, "kind"),
                    f"{module} does not import in {interpreter}: install it "
                    f"({interpreter} -m pip install {package}) or set [target] interpreter",
                )
            )
    return problems


def _python_entry(manifest: Manifest, root: Path, interpreter: Path) -> list[Problem]:
    target = manifest.target
    roots = [root / name for name in target.source_roots]
    problems = [
        Problem(("target", "source_roots"), f"source root {r} does not exist; fix source_roots")
        for r in roots
        if not r.is_dir()
    ]
    if target.script is not None and not (root / target.script).is_file():
        problems.append(
            Problem(
                ("target", "script"),
                f"script {target.script!r} does not exist at {root / target.script}; "
                "fix [target] script",
            )
        )
    if target.module is not None:
        problems += _module_problems(target.module, roots, interpreter)
    return problems


def _module_problems(module: str, roots: Sequence[Path], interpreter: Path) -> list[Problem]:
    """`python -m module` must find a module file or a package with `__main__.py`.

    The source roots are searched as files, never imported: importing a package runs its
    `__init__`, and target code runs only in the sandbox. A module in none of them may be
    installed (a dependency's CLI); the interpreter is asked, with the tree off sys.path.
    """
    relative = Path(*module.split("."))
    for root in roots:
        if root.joinpath(relative).with_suffix(".py").is_file():
            return []
        package = root / relative
        if package.is_dir():
            if (package / "__main__.py").is_file():
                return []
            return [
                Problem(
                    ("target", "module"),
                    f"module {module!r} is the package {package} with no __main__.py, which "
                    "`python -m` cannot run; add one or name the module that has the entry point",
                )
            ]
    code = f"import importlib.util as u; print(u.find_spec({module!r}) is not None)"
    if _run_python(interpreter, code).stdout.strip() == "True":
        return []
    searched = ", ".join(str(r) for r in roots)
    return [
        Problem(
            ("target", "module"),
            f"module {module!r} is neither in the source roots ({searched}) nor installed for "
            f"{interpreter}; fix [target] module or source_roots",
        )
    ]


# `[tests] args` of the unittest runner: where its problems are reported.
_ARGS_KEY: tuple[str | int, ...] = ("tests", "args")


def _unittest(loaded: LoadedManifest, interpreter: Path) -> list[Problem]:
    """`runner = "unittest"`: the args as the target interpreter's own unittest reads them, and
    the folders and test files they name."""
    try:
        read = read_unittest_args(interpreter, loaded.manifest.tests.args)
    except ValueError as exc:
        said = f"`python -m unittest` refuses these arguments ({exc}); fix [tests] args"
        return [Problem(_ARGS_KEY, said)]
    except InfrastructureError as exc:
        return [Problem(("target", "interpreter"), str(exc))]
    if not read.discover:
        return _unittest_names(loaded.root, read.names)
    return _unittest_discovery(loaded, read)


def _folder(root: Path, name: str) -> Path:
    """A discovery folder as unittest finds it: a path, or a dotted package name."""
    path = root / name
    if path.is_dir() or "/" in name:
        return path
    return root.joinpath(*name.split("."))


def _unittest_discovery(loaded: LoadedManifest, read: UnittestArgs) -> list[Problem]:
    root = loaded.root
    problems = []
    if read.top is not None and not (root / read.top).is_dir():
        problems.append(
            Problem(
                _ARGS_KEY,
                f"the top-level folder {read.top!r} (-t) does not exist at {root / read.top}; "
                'fix [tests] args: it is the folder test modules import from, usually "."',
            )
        )
    start = _folder(root, read.start)
    if not start.is_dir():
        problems.append(
            Problem(
                _ARGS_KEY,
                f"the start folder {read.start!r} (-s) does not exist at {start}; fix [tests] "
                f"args: name the folder that holds the tests, relative to {root}",
            )
        )
        return problems
    found = discovered(start, read.pattern)
    if not found:
        problems.append(
            Problem(
                _ARGS_KEY,
                f"no test file in {start} or the packages below it matches the pattern "
                f"{read.pattern!r} (-p), so unittest would find no test; fix the pattern or "
                "the start folder in [tests] args",
            )
        )
    return problems + _unprotected(loaded, start, found)


def discovered(start: Path, pattern: str) -> list[Path]:
    """The files unittest's discovery imports: those whose name matches `pattern` and is a
    module name, in `start` and in the packages (folders with an `__init__.py`) below it."""
    found: list[Path] = []
    for entry in sorted(start.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").is_file():
            found += discovered(entry, pattern)
        elif entry.suffix == ".py" and entry.stem.isidentifier() and fnmatch(entry.name, pattern):
            found.append(entry)
    return found


def _unprotected(loaded: LoadedManifest, start: Path, found: Sequence[Path]) -> list[Problem]:
    """Test files a patch could edit: speedproof protects `test_*.py`, `*_test.py` and folders
    named `tests` or `test` by default, and what [protect] paths adds; a test file outside all of
    them is code a candidate may rewrite to pass."""
    try:
        repo = repository_root(loaded.root)
        rules = ProtectedPaths.for_manifest(loaded, repo)
    except (InfrastructureError, ManifestError):
        return []  # no repository: nothing a patch could reach yet
    named = [f.resolve().relative_to(repo).as_posix() for f in found]
    open_to_patches = [name for name in named if not rules.is_protected(name)]
    if not open_to_patches:
        return []
    folder = os.path.relpath(start, loaded.root)
    return [
        Problem(
            _ARGS_KEY,
            f"{len(open_to_patches)} test file(s) unittest discovers are open to a patch "
            f"({', '.join(open_to_patches[:5])}): a candidate could rewrite them to pass; "
            f'protect their folder: [protect] paths = ["{folder}"]',
        )
    ]


def _unittest_names(root: Path, names: Sequence[str]) -> list[Problem]:
    """Tests named rather than discovered: a file path must exist, and a package named alone
    runs only what its `__init__.py` defines, which is rarely the tests inside it."""
    problems = []
    for name in names:
        path = root / name
        if name.endswith(".py") and not path.is_file():
            problems.append(
                Problem(_ARGS_KEY, f"test file {name!r} does not exist at {path}; fix [tests] args")
            )
            continue
        package = root.joinpath(*name.split("."))
        init = package / "__init__.py"
        if init.is_file() and "def load_tests" not in init.read_text(errors="replace"):
            problems.append(
                Problem(
                    _ARGS_KEY,
                    f"{name!r} names the package {package}, and `python -m unittest {name}` runs "
                    "only the tests its __init__.py defines (none here); to run the tests inside "
                    f'it, args = ["discover", "-s", "{package.relative_to(root)}", "-t", "."]',
                )
            )
    return problems


def _module_root(root: Path) -> Path | None:
    folder = root
    while True:
        if (folder / "go.mod").is_file():
            return folder
        if (folder / ".git").exists() or folder.parent == folder:
            return None
        folder = folder.parent


def _go_dependencies(manifest: Manifest, root: Path) -> list[Problem]:
    """The module's packages must resolve as the judge builds: offline, from the vendor folder
    or the user's module download cache (`GOPROXY=file://…,off`), nothing downloaded."""
    module = _module_root(root)
    if module is None or (module / "vendor" / "modules.txt").is_file():
        return []
    try:
        tool = GoTool.locate()
    except InfrastructureError as exc:
        return [Problem(("target", "language"), str(exc))]
    runs_program = any(not w.is_bench for w in manifest.workloads)
    patterns = (
        [manifest.target.package] if manifest.target.language == "go" and runs_program else []
    )
    patterns += list(dict.fromkeys(w.package or "." for w in manifest.benchmarks))
    patterns += ["./..."] if manifest.tests.runner == "go" else []
    said = _go_list(tool, root, patterns)
    if said is None:
        return []
    key: tuple[str | int, ...] = ("target", "package")
    if manifest.target.language != "go":
        key = ("tests", "runner")
    return [
        Problem(
            key,
            f"the Go module at {module} has dependencies that are neither vendored nor in the "
            f"module cache, and the judge builds offline: `go list` says: {said}; run "
            "`go mod vendor` or `go mod download` first",
        )
    ]


def _go_list(tool: GoTool, root: Path, patterns: Sequence[str]) -> str | None:
    """What `go list -deps -test` says when it fails offline, or None when it succeeds."""
    cache = tool.download_cache
    gopath = default_cache_dir() / "gopath"
    env = build_env(
        [],
        {
            "GOROOT": str(tool.goroot),
            "GOPATH": str(gopath),
            "GOMODCACHE": str(gopath / "pkg" / "mod"),
            "GOCACHE": str(default_cache_dir() / "go-build"),
            "GOFLAGS": "-mod=readonly -modcacherw -buildvcs=false",
            "GOPROXY": f"file://{cache},off" if cache else "off",
            "GOSUMDB": "off",
            "GOTOOLCHAIN": "local",
            "GOENV": "off",
            "CGO_ENABLED": "0",
        },
    )
    argv = [str(tool.binary), "list", "-deps", "-test", *patterns]
    try:
        done = subprocess.run(
            argv, cwd=root, env=env, capture_output=True, text=True, timeout=_GO_LIST_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not run ({exc})"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return "; ".join(lines[:_SAID_LINES]) or f"exit {done.returncode}"
