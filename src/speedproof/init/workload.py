"""A command line typed after `--` as a representative workload: which entry point, which inputs.

The first word names the entry point: a console script, a package with `__main__.py`, `python -m
MODULE`, `python tool.py` or `tool.py`; for Go a main package's binary name (`./logstat`,
`bin/logstat` or `logstat`) or `go run PACKAGE`. When the project has exactly one entry point, any
first word is taken to mean it (a binary built under another name), and the draft says so.

Every later word that names an existing file or folder (relative to the folder init was run
from, as the shell would read it; an `--option=value` value too) is rewritten relative to the
manifest's folder, where the judge runs workloads: files become the workload's declared inputs
(protected from every patch, copied for its twin), folders are protected as a whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.init.model import EntryPoint, Project, UsageProblem, WorkloadDraft

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]+")


@dataclass
class _Inputs:
    args: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def draft_workload(
    project: Project, command: Sequence[str], *, cwd: Path, stdin: Path | None = None
) -> WorkloadDraft:
    if not command:
        raise UsageProblem("nothing after `--`: give the command a user runs, e.g. -- tool big.txt")
    entry, rest, warnings = _entry_for(project, list(command), cwd)
    inputs = _Inputs(warnings=warnings)
    for token in rest:
        inputs.args.append(_argument(token, cwd, project.root, inputs))
    stdin_name = None
    if stdin is not None:
        stdin_name = _inside(project.root, (cwd / stdin).resolve())
        if stdin_name is None or not (cwd / stdin).is_file():
            raise UsageProblem(f"--stdin {stdin}: not a file inside {project.root}")
    return WorkloadDraft(
        command=tuple(command),
        entry=entry,
        id=workload_id(inputs.files, stdin_name, entry.name),
        args=tuple(inputs.args),
        files=tuple(dict.fromkeys(inputs.files)),
        stdin=stdin_name,
        folders=tuple(dict.fromkeys(inputs.folders)),
        warnings=tuple(inputs.warnings),
    )


def _entry_for(
    project: Project, command: list[str], cwd: Path
) -> tuple[EntryPoint, list[str], list[str]]:
    """The entry point the command starts, the words after it, and warnings."""
    first = os.path.basename(command[0])
    by_name: dict[str, EntryPoint] = {}
    for entry in project.entry_points:
        # A console script and a package may share a name; the shell runs the script.
        by_name.setdefault(entry.name, entry)
    if first in by_name:
        return by_name[first], command[1:], []
    if project.language == "python":
        found = _python_form(project, command, cwd)
    else:
        found = _go_run(project, command, cwd)
    if found is not None:
        return found[0], found[1], []
    if len(project.entry_points) == 1:
        (only,) = project.entry_points
        said = f"`{command[0]}` was taken to be the project's one entry point, {only.name}"
        return only, command[1:], [said]
    names = ", ".join(dict.fromkeys(e.name for e in project.entry_points)) or "none"
    raise UsageProblem(
        f"`{command[0]}` is none of the project's entry points ({names}); start the command "
        "with one of them"
        + (", `python -m MODULE` or `python SCRIPT.py`" if project.language == "python" else "")
        + (" or `go run PACKAGE`" if project.language == "go" else "")
    )


def _script(project: Project, word: str, cwd: Path) -> EntryPoint:
    relative = _inside(project.root, (cwd / word).resolve())
    if relative is None or not (project.root / relative).is_file():
        raise UsageProblem(f"{word}: no such script inside {project.root}")
    return EntryPoint(Path(relative).stem, "script", {"script": relative}, "the command line")


def _python_form(
    project: Project, command: list[str], cwd: Path
) -> tuple[EntryPoint, list[str]] | None:
    """`python -m MODULE …`, `python tool.py …` or `tool.py …`."""
    if command[0].endswith(".py"):
        return _script(project, command[0], cwd), command[1:]
    if not _PYTHON.match(os.path.basename(command[0])) or len(command) < 2:
        return None
    if command[1] == "-m" and len(command) > 2:
        module = command[2]
        known = [e for e in project.entry_points if e.target.get("module") == module]
        entry = known[0] if known else EntryPoint(module, "package-main", {"module": module}, "-m")
        return entry, command[3:]
    if command[1].endswith(".py"):
        return _script(project, command[1], cwd), command[2:]
    return None


def _go_run(project: Project, command: list[str], cwd: Path) -> tuple[EntryPoint, list[str]] | None:
    """`go run PACKAGE …` (flags before the package are skipped)."""
    if os.path.basename(command[0]) != "go" or command[1:2] != ["run"]:
        return None
    words = command[2:]
    while words and words[0].startswith("-"):
        words = words[1:]
    if not words:
        return None
    relative = _inside(project.root, (cwd / words[0]).resolve())
    if relative is None:
        raise UsageProblem(f"go run {words[0]}: the package lies outside the repository")
    package = "." if relative == "." else f"./{relative}"
    for entry in project.entry_points:
        if entry.target.get("package") == package:
            return entry, words[1:]
    raise UsageProblem(f"go run {words[0]}: no main package at {package} in {project.root}")


def _inside(root: Path, path: Path) -> str | None:
    """`path` relative to `root` (with `..` when it lies beside it in the same repository),
    or None when it is outside the repository altogether."""
    top = repository_of(root) or root
    if not path.is_relative_to(top):
        return None
    return Path(os.path.relpath(path, root)).as_posix()


def repository_of(root: Path) -> Path | None:
    """The nearest folder at or above `root` holding a `.git`: the repository it lies in."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _argument(token: str, cwd: Path, root: Path, inputs: _Inputs) -> str:
    if token == "-" or not token:
        return token
    if token.startswith("-"):
        option, equals, value = token.partition("=")
        if not equals or not value:
            return token
        return f"{option}={_path_or_word(value, cwd, root, inputs)}"
    return _path_or_word(token, cwd, root, inputs)


def _path_or_word(token: str, cwd: Path, root: Path, inputs: _Inputs) -> str:
    path = (cwd / token).resolve()
    if not path.exists():
        return token
    relative = _inside(root, path)
    if relative is None:
        inputs.warnings.append(
            f"{token} lies outside the repository, where the judge cannot see it: copy it into "
            "the repository (a data/ folder, say) and run init again with that path"
        )
        return token
    if path.is_dir():
        inputs.folders.append(relative)
    else:
        inputs.files.append(relative)
    return relative


def workload_id(files: Sequence[str], stdin: str | None, entry: str) -> str:
    """A name for the workload: its first input's stem (`big` for data/big.sql), else the
    entry point's."""
    named = [*files, *([stdin] if stdin else [])]
    stem = Path(named[0]).name.split(".")[0] if named else entry
    return _UNSAFE_ID.sub("-", stem).strip("-.") or "first"
