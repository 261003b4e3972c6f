"""What `init` found in a project: plain data, shared by detection, writing and printing."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from speedproof.ground.errors import SpeedproofError

ProjectLanguage = Literal["go", "python"]
EntryKind = Literal["console-script", "package-main", "script", "go-main"]


@dataclass(frozen=True)
class EntryPoint:
    """One way the project is started, and the `[target]` keys that start it that way."""

    # What a user types: a console script's name, a package run with -m, a Go binary's name.
    name: str
    kind: EntryKind
    # `module`, `script` or `package`, as the manifest's [target] spells them.
    target: dict[str, str]
    # Where it was found, for the comment above it: `pyproject.toml [project.scripts]`.
    source: str
    # Why `python -m` would not reach the function a console script names; empty when it would.
    problem: str = ""


@dataclass(frozen=True)
class TestSetup:
    runner: str
    args: tuple[str, ...]
    # How the runner was chosen, in words.
    found_by: str
    note: str = ""


@dataclass(frozen=True)
class Benchmark:
    """An existing benchmark: `go test -bench`, a pytest-benchmark test or a pyperf script."""

    kind: Literal["go", "pytest-benchmark", "pyperf"]
    name: str
    # `path:line`, relative to the project.
    where: str


@dataclass(frozen=True)
class Project:
    root: Path
    language: ProjectLanguage
    name: str
    # How the language was recognised: `go.mod`, `pyproject.toml`, …
    marker: str
    entry_points: tuple[EntryPoint, ...]
    tests: TestSetup
    # Python: `[target] interpreter` as it will be written (None: speedproof's own), and why.
    interpreter: str | None = None
    interpreter_note: str = ""
    # `go1.23.4 linux/amd64` or `Python 3.11.7`, or why it could not be told.
    toolchain: str = ""
    source_roots: tuple[str, ...] = (".",)
    benchmarks: tuple[Benchmark, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["root"] = str(self.root)
        return found


@dataclass(frozen=True)
class WorkloadDraft:
    """The representative workload a command line after `--` describes."""

    command: tuple[str, ...]
    entry: EntryPoint
    id: str
    args: tuple[str, ...]
    files: tuple[str, ...] = ()
    stdin: str | None = None
    # Folders the command names: protected as a whole (a twin copies files, not folders).
    folders: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["entry"] = self.entry.name
        return found


class UsageProblem(SpeedproofError):
    """What the user asked cannot be done as asked: `init` exits 2 and writes nothing."""
