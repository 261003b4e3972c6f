"""A Python project: its name, entry points, source roots, interpreter, tests and benchmarks.

Entry points are the console scripts (`[project.scripts]` in pyproject.toml, `console_scripts`
in setup.cfg or setup.py) and every top-level package with a `__main__.py`. The judge starts a
Python target as `python -m MODULE` with the source roots on PYTHONPATH, so a console script
`tool = "pkg.cli:main"` becomes `module = "pkg.cli"` when that module calls `main()` under
`if __name__ == "__main__":`, else the nearest package of it with a `__main__.py`; when neither
exists, `python -m` would import the module and call nothing, and the entry point says so.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from speedproof.init.files import read_text, source_files, where
from speedproof.init.model import Benchmark, EntryPoint, Project
from speedproof.init.probe import run_probe
from speedproof.init.python_tests import detect_tests

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
# Tried in this order: a venv inside the project is the one its own tools use.
VENV_NAMES = (".venv", "venv")
# `python -m pkg.cli` calls nothing unless the module runs code as __main__.
_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.MULTILINE)
# `name = package.module:function` in setup.cfg's console_scripts or setup.py's entry_points.
_SCRIPT_SPEC = re.compile(r"""([A-Za-z0-9_.\-]+)\s*=\s*([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_][\w.]*)""")
_SETUP_NAME = re.compile(r"""\bname\s*=\s*['"]([^'"]+)['"]""")
_PYTEST_BENCHMARK = re.compile(r"^\s*def\s+(test_\w+)\s*\(([^)]*)\)", re.MULTILINE)
_PYPERF = re.compile(r"^\s*(?:import\s+pyperf|from\s+pyperf\s+import)", re.MULTILINE)
# Asking an interpreter its version and whether it has pytest: 60 s covers a cold disk.
_PROBE_TIMEOUT_S = 60.0
_PROBE = (
    "import sys, importlib.util as u; "
    "print(sys.version.split()[0], u.find_spec('pytest') is not None, sys.executable)"
)


def marker(root: Path) -> str | None:
    """The file that makes `root` a Python project, or None."""
    return next((name for name in MARKERS if (root / name).is_file()), None)


def read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        warnings.append(f"{path.name} could not be read ({exc}); what it says was not used")
        return {}


def read_ini(path: Path) -> configparser.ConfigParser | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return parser


def detect(root: Path, found_by: str) -> Project:
    warnings: list[str] = []
    pyproject = read_toml(root / "pyproject.toml", warnings)
    setup_cfg = read_ini(root / "setup.cfg")
    scripts = _console_scripts(root, pyproject, setup_cfg)
    roots = _source_roots(root, scripts)
    entries = [_console_entry(name, spec, source, root, roots) for name, spec, source in scripts]
    named = {e.target.get("module") for e in entries}
    entries += [e for e in _package_mains(root, roots) if e.target["module"] not in named]
    interpreter, note = _interpreter(root)
    version, has_pytest, executable = _probe(root, interpreter, warnings)
    tests = detect_tests(root, pyproject, has_pytest=has_pytest, executable=executable)
    if tests.runner == "pytest" and not has_pytest:
        warnings.append(
            f"pytest is not installed for {interpreter or 'the Python running speedproof'}: "
            "the judge runs the tests with it, so install pytest there"
        )
    return Project(
        root=root,
        language="python",
        name=_name(root, pyproject, setup_cfg),
        marker=found_by,
        entry_points=tuple(entries),
        tests=tests,
        interpreter=interpreter,
        interpreter_note=note,
        toolchain=f"Python {version}" if version else "Python (its version could not be read)",
        source_roots=tuple(roots),
        benchmarks=tuple(_benchmarks(root)),
        warnings=tuple(warnings),
    )


def _name(
    root: Path, pyproject: dict[str, Any], setup_cfg: configparser.ConfigParser | None
) -> str:
    name = pyproject.get("project", {}).get("name")
    if not name and setup_cfg is not None:
        name = setup_cfg.get("metadata", "name", fallback=None)
    if not name and (root / "setup.py").is_file():
        found = _SETUP_NAME.search(read_text(root / "setup.py"))
        name = found.group(1) if found else None
    return str(name or root.resolve().name)


def _console_scripts(
    root: Path, pyproject: dict[str, Any], setup_cfg: configparser.ConfigParser | None
) -> list[tuple[str, str, str]]:
    """(name, `module:function`, where it was found), first source first, each name once."""
    found: list[tuple[str, str, str]] = []
    for name, spec in pyproject.get("project", {}).get("scripts", {}).items():
        found.append((str(name), str(spec), "pyproject.toml [project.scripts]"))
    if setup_cfg is not None:
        text = setup_cfg.get("options.entry_points", "console_scripts", fallback="")
        found += [
            (n, f"{m}:{f}", "setup.cfg console_scripts") for n, m, f in _SCRIPT_SPEC.findall(text)
        ]
    setup_py = read_text(root / "setup.py") if (root / "setup.py").is_file() else ""
    if "console_scripts" in setup_py:
        found += [
            (n, f"{m}:{f}", "setup.py console_scripts")
            for n, m, f in _SCRIPT_SPEC.findall(setup_py)
        ]
    unique: dict[str, tuple[str, str, str]] = {}
    for item in found:
        unique.setdefault(item[0], item)
    return list(unique.values())


def _source_roots(root: Path, scripts: list[tuple[str, str, str]]) -> list[str]:
    """`src` for a src layout (the top package of a console script, or any package, under
    src/), else the project folder."""
    tops = {spec.split(":")[0].split(".")[0] for _, spec, _ in scripts}
    src = root / "src"
    if any((src / top).is_dir() for top in tops):
        return ["src"]
    if not tops and src.is_dir() and any((p / "__init__.py").is_file() for p in src.iterdir()):
        return ["src"]
    return ["."]


def _runnable(module: str, folder: Path) -> str | None:
    """The module `python -m` should run to reach `module`'s entry: itself when it runs as
    __main__, else its nearest package with a `__main__.py`; None when there is neither."""
    parts = module.split(".")
    path = folder.joinpath(*parts)
    if (path / "__main__.py").is_file():
        return module
    if path.with_suffix(".py").is_file() and _MAIN_GUARD.search(read_text(path.with_suffix(".py"))):
        return module
    for depth in range(len(parts) - 1, 0, -1):
        if folder.joinpath(*parts[:depth], "__main__.py").is_file():
            return ".".join(parts[:depth])
    return None


def _console_entry(name: str, spec: str, source: str, root: Path, roots: list[str]) -> EntryPoint:
    module, _, function = (part.strip() for part in spec.partition(":"))
    function = function.split(".")[0] or "main"
    folder = root / roots[0]
    runs = _runnable(module, folder)
    if runs is None:
        problem = (
            f"`python -m {module}` would import {module} and call nothing: it has no "
            f'`if __name__ == "__main__":` block and no package of it has a __main__.py; add '
            f'`if __name__ == "__main__": {function}()` at its end'
        )
        return EntryPoint(name, "console-script", {"module": module}, source, problem)
    if runs != module:
        source += f"; runs {runs}/__main__.py, which should call {module}:{function}"
    return EntryPoint(name, "console-script", {"module": runs}, source)


def _package_mains(root: Path, roots: list[str]) -> Iterator[EntryPoint]:
    for name in roots:
        folder = root / name
        for main in sorted(folder.glob("*/__main__.py")):
            package = main.parent
            if (package / "__init__.py").is_file():
                where_found = f"{main.relative_to(root).as_posix()}"
                yield EntryPoint(
                    package.name, "package-main", {"module": package.name}, where_found
                )


def _interpreter(root: Path) -> tuple[str | None, str]:
    """`[target] interpreter` as written, and why: the project's venv, else the python3 a shell
    here would run (through any pyenv shim, to the real file; a venv's path is kept as is)."""
    for name in VENV_NAMES:
        python = root / name / "bin" / "python"
        if python.is_file() and os.access(python, os.X_OK):
            return f"{name}/bin/python", f"the project's {name}"
    found = shutil.which("python3")
    if found is None:
        return None, "no python3 on PATH: the Python running speedproof runs the target"
    executable = _executable(found)
    active = os.environ.get("VIRTUAL_ENV")
    if active and executable.startswith(active.rstrip("/") + "/"):
        return executable, f"the active virtual environment {active}"
    return executable, "the python3 on PATH"


def _executable(python3: str) -> str:
    """What `sys.executable` says for `python3`: a pyenv shim answers with the real Python."""
    argv = [python3, "-I", "-c", "import sys; print(sys.executable)"]
    done = run_probe(argv, timeout_s=_PROBE_TIMEOUT_S)
    if isinstance(done, str):
        return python3
    said = done.stdout.strip()
    return said if done.returncode == 0 and os.path.isabs(said) else python3


def _probe(
    root: Path, interpreter: str | None, warnings: list[str]
) -> tuple[str | None, bool, str | None]:
    """(version, whether pytest imports, sys.executable) of the chosen interpreter, or of the
    Python running speedproof when none is chosen (the judge's default)."""
    if interpreter is None:
        python = sys.executable
    else:
        python = interpreter if os.path.isabs(interpreter) else str(root / interpreter)
    done = run_probe([python, "-I", "-c", _PROBE], timeout_s=_PROBE_TIMEOUT_S)
    if isinstance(done, str):
        warnings.append(f"the interpreter {python} cannot run: {done}")
        return None, False, None
    words = done.stdout.split()
    if done.returncode != 0 or len(words) < 3:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        warnings.append(f"the interpreter {python} cannot run: {said[0]}")
        return None, False, None
    return words[0], words[1] == "True", python


def _benchmarks(root: Path) -> Iterator[Benchmark]:
    for path in source_files(root, ".py"):
        text = read_text(path)
        if "benchmark" in text and path.name.startswith("test"):
            for match in _PYTEST_BENCHMARK.finditer(text):
                if re.search(r"\bbenchmark\b", match.group(2)):
                    line = text.count("\n", 0, match.start(1)) + 1
                    yield Benchmark("pytest-benchmark", match.group(1), where(path, root, line))
        found = _PYPERF.search(text) if "pyperf" in text else None
        if found is not None:
            line = text.count("\n", 0, found.start()) + 1
            yield Benchmark("pyperf", path.stem, where(path, root, line))
