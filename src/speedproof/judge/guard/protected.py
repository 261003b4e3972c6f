"""Which repository paths a candidate patch may not touch, and which rule says so.

Every path here is repository-relative POSIX (`sub/go.mod`), because patches and `git status`
speak that way even when the target folder is a subfolder of the repository. Matching is
case-sensitive (`fnmatchcase`) on whole path components. The defaults are deliberately matched
anywhere in the tree (a nested `go.mod` or `tests/` matters as much as a top-level one): a
wrongly protected file costs one rejected patch, a wrongly open one costs a false verdict.

A command target has no language defaults, so its harness is read from its manifest: every file
in the repository that its build command, test command, workload generators and arguments name
(and, for a reported-metric benchmark, its program and prefix, which print the metrics). The
program and prefix of a timed target stay open: they are what the candidate makes faster.
"""

from __future__ import annotations

import glob
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from speedproof.bench.protected import benchmark_files
from speedproof.ground.errors import ManifestError
from speedproof.ground.git import repository_root
from speedproof.manifest import Language, Manifest
from speedproof.manifest_loading import LoadedManifest

RuleKind = Literal["component", "path"]


@dataclass(frozen=True)
class Rule:
    """`component`: some path component matches `pattern`; `path`: the path or a folder above it
    matches `pattern` (so protecting `data` protects `data/in.txt`)."""

    kind: RuleKind
    pattern: str
    why: str

    def matches(self, parts: tuple[str, ...]) -> bool:
        if self.kind == "component":
            return any(fnmatchcase(part, self.pattern) for part in parts)
        return any(
            fnmatchcase("/".join(parts[:depth]), self.pattern) for depth in range(1, len(parts) + 1)
        )


def _names(why: str, *patterns: str) -> list[Rule]:
    return [Rule("component", pattern, f"{why} (`{pattern}`)") for pattern in patterns]


# Whatever the target's language, a Python test runner may run over the tree (a command
# target's `python -m pytest`, a helper script): what it loads before any test, unasked, is
# never the candidate's to add (docs/adr/0060).
PYTHON_HOOKS: tuple[Rule, ...] = (
    # Loaded by pytest before any test, wherever it sits under the rootdir.
    *_names("pytest conftest, loaded before any test", "conftest.py"),
    # Run by Python's `site` module at start-up from any folder on the path at that moment, before
    # the test runner or its plugins exist: code there can rewrite results at exit unseen.
    *_names("Python start-up hook", "sitecustomize.py", "usercustomize.py", "*.pth"),
    # Installed-package metadata on the path: its `entry_points.txt` registers pytest plugins
    # (`pytest11`), which pytest loads at start with the tree's root on sys.path.
    *_names("Python package metadata, whose entry points load plugins", "*.dist-info"),
    *_names("Python package metadata, whose entry points load plugins", "*.egg-info"),
    *_names("Python package link", "*.egg-link"),
    # Byte-code with no source beside it is imported as is: code no reader can review.
    *_names("Python byte-code", "*.pyc", "*.pyo", "__pycache__"),
)

ALWAYS: tuple[Rule, ...] = (
    *_names("git metadata", ".git"),
    *_names("git attributes change how files are checked out and diffed", ".gitattributes"),
    *_names("submodule list", ".gitmodules"),
    *_names("CI configuration", ".ci", ".github"),
    *PYTHON_HOOKS,
)

GO: tuple[Rule, ...] = (
    *_names("Go test file", "*_test.go"),
    *_names("Go test data", "testdata"),
    *_names("Go module and workspace definition", "go.mod", "go.sum", "go.work", "go.work.sum"),
    *_names("vendored Go dependencies", "vendor"),
    *_names("Go profile-guided optimisation profile", "default.pgo"),
)

PYTHON: tuple[Rule, ...] = (
    *_names("Python test file", "test_*.py", "*_test.py"),
    *_names("Python test folder", "tests", "test"),
    *_names("test runner configuration", "pytest.ini", "tox.ini", "noxfile.py"),
    *_names("Python packaging configuration", "setup.cfg", "setup.py", "pyproject.toml"),
    *_names("Python dependency pins", "requirements*.txt", "Pipfile", "Pipfile.lock"),
    *_names("Python dependency pins", "poetry.lock", "uv.lock", "*.lock", ".python-version"),
)

LANGUAGE_RULES: dict[str, tuple[Rule, ...]] = {"go": GO, "python": PYTHON, "command": ()}
# A target of any language whose tests pytest or unittest runs gets the Python rules too: its
# tests, conftests, runner configuration and start-up hooks decide what the runner reports.
RUNNER_RULES: dict[str, tuple[Rule, ...]] = {"pytest": PYTHON, "unittest": PYTHON}


def split_parts(path: str) -> tuple[str, ...]:
    """Components of a relative POSIX path, without empty and `.` components."""
    return tuple(part for part in path.split("/") if part not in ("", "."))


class ProtectedPaths:
    """An ordered set of rules; the first one that matches a path is its reason."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._rules = tuple(rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self._rules

    @classmethod
    def build(
        cls,
        language: Language,
        *,
        extra: Iterable[str] = (),
        manifest_path: str | None = None,
        inputs: Iterable[str] = (),
        target_dir: str = "",
        runner: str | None = None,
        named: Iterable[tuple[str, str]] = (),
    ) -> ProtectedPaths:
        """Rules for a target in `target_dir` (repository-relative, "" for the top).

        `extra` are the manifest's `protect.paths` globs and `inputs` its workload input files,
        both relative to the target folder; `manifest_path` is repository-relative; `runner` is
        the manifest's `[tests] runner`; `named` are (repository-relative file, the command
        naming it) pairs, from `command_files`.
        """
        runner_rules = RUNNER_RULES.get(runner or "", ())
        language_rules = LANGUAGE_RULES[language]
        rules = [*ALWAYS, *language_rules]
        rules += [r for r in runner_rules if r not in language_rules]
        if manifest_path is not None:
            rules.append(_exact(posixpath.normpath(manifest_path).lstrip("/"), "the manifest"))
        rules.extend(_manifest_pattern(target_dir, pattern) for pattern in extra)
        for name in inputs:
            anchored = _anchored(target_dir, name)
            # An input outside the repository is out of any patch's reach (`..` is refused).
            if anchored is not None:
                rules.append(_exact(anchored, "a workload input file"))
        rules.extend(_exact(path, f"named by the manifest's {source}") for path, source in named)
        return cls(rules)

    @classmethod
    def for_manifest(cls, loaded: LoadedManifest, repo_root: Path | None = None) -> ProtectedPaths:
        """Rules for a loaded manifest; `repo_root` defaults to the repository holding it."""
        root = repository_root(loaded.root) if repo_root is None else repo_root.resolve()
        target_dir = _relative_to(loaded.root.resolve(), root)
        manifest_path = _relative_to(loaded.path.resolve(), root)
        if target_dir is None or manifest_path is None:
            raise ManifestError(f"{loaded.path}: the manifest is not inside the repository {root}")
        manifest = loaded.manifest
        return cls.build(
            manifest.target.language,
            extra=manifest.protect.paths,
            manifest_path=manifest_path,
            inputs=[_input_relative(loaded.root, root, name) for name in manifest.input_files()],
            target_dir=target_dir,
            runner=manifest.tests.runner,
            named=[*command_files(manifest, root, target_dir), *_benchmarks(manifest, target_dir)],
        )

    def reason(self, path: str) -> str | None:
        """Why the repository-relative `path` is protected, or None when it is not."""
        parts = split_parts(path)
        for rule in self._rules:
            if rule.matches(parts):
                return rule.why
        return None

    def is_protected(self, path: str) -> bool:
        return self.reason(path) is not None


def command_files(manifest: Manifest, root: Path, target_dir: str) -> list[tuple[str, str]]:
    """(repository-relative file, the command naming it) for a command target; [] otherwise.

    Each argv token, and the value of a `--flag=value` token, that is a relative path to a file
    in the repository once resolved against the target folder counts; a symbolic link protects
    the file it leads to as well.
    """
    if manifest.target.language != "command":
        return []
    found: dict[str, str] = {}
    for source, argv in _commands(manifest):
        for token in argv:
            for path in _files_named(token, root, target_dir):
                found.setdefault(path, source)
    return list(found.items())


def _benchmarks(manifest: Manifest, target_dir: str) -> list[tuple[str, str]]:
    """(repository-relative file, what names it) for each Python benchmark's own file."""
    found = [(_anchored(target_dir, name), why) for name, why in benchmark_files(manifest)]
    return [(path, why) for path, why in found if path]


def _commands(manifest: Manifest) -> list[tuple[str, list[str]]]:
    commands = [("build command", manifest.target.build), ("test command", manifest.tests.args)]
    for workload in manifest.workloads:
        commands.append((f"workload `{workload.id}` generator", workload.generate))
        commands.append((f"workload `{workload.id}` arguments", workload.args))
    if manifest.reported is not None:
        program = [manifest.target.program or "", *manifest.target.prefix]
        commands.append(("reported-metric benchmark command", program))
    return commands


def _files_named(token: str, root: Path, target_dir: str) -> list[str]:
    """The repository files `token` names: itself, the value after `=`, and link targets."""
    found: list[str] = []
    for name in dict.fromkeys((token, token.partition("=")[2])):
        anchored = _anchored(target_dir, name) if name else None
        if not anchored or not (root / anchored).is_file():
            continue
        found.append(anchored)
        real = _relative_to((root / anchored).resolve(), root)
        if real and real != anchored:
            found.append(real)
    return found


def _exact(path: str, why: str) -> Rule:
    return Rule("path", glob.escape(path) if path else "*", f"{why} (`{path or '.'}`)")


def _relative_to(path: Path, root: Path) -> str | None:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return "" if relative == "." else relative


def _input_relative(target: Path, root: Path, name: str) -> str:
    """A workload input as a target-relative name; absolute names inside the repository too."""
    if not Path(name).is_absolute():
        return name
    inside = _relative_to(Path(name).resolve(), root)
    if inside is None:
        return name
    base = _relative_to(target.resolve(), root) or ""
    return posixpath.relpath(inside or ".", base or ".")


def _anchored(target_dir: str, path: str) -> str | None:
    """`path` (relative to the target folder) as a repository-relative path, or None outside."""
    if path.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(target_dir or ".", path))
    if joined == ".." or joined.startswith("../"):
        return None
    return "" if joined == "." else joined


def _manifest_pattern(target_dir: str, pattern: str) -> Rule:
    """A `protect.paths` entry: a bare name matches any component, anything else the path."""
    why = f"listed in the manifest's `protect.paths` (`{pattern}`)"
    bare = pattern.rstrip("/")
    while bare.startswith("./"):
        bare = bare[2:]
    if not bare:
        raise ManifestError(f"`protect.paths`: {pattern!r} names no path")
    if "/" not in bare and bare not in (".", ".."):
        return Rule("component", bare, why)
    # A leading `/` means the target folder, as in .gitignore; the target folder itself is
    # escaped so a `[` in its name is not read as a glob.
    full = _anchored(glob.escape(target_dir), bare.lstrip("/"))
    if full is None:
        raise ManifestError(f"`protect.paths`: {pattern!r} points outside the repository")
    return Rule("path", full or "*", why)
