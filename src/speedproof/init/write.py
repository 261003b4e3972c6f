"""Render `speedproof.toml` from what detection found, and write it unless one is there.

The manifest comes from a jinja2 template (`speedproof.toml.j2` beside this module) so that its
comments read as a person would write them. Every value goes through `toml_value`, which writes
TOML basic strings with the escapes TOML requires (quotes, backslashes, control characters), so
no project name, path or argument can break the file.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.init.bench_example import bench_example
from speedproof.init.derive import Derived
from speedproof.init.model import EntryPoint, Project, UsageProblem, WorkloadDraft
from speedproof.init.toml_text import toml_value
from speedproof.manifest import MANIFEST_NAME

TEMPLATE = "speedproof.toml.j2"
# Comment lines wrap here: the manifests in examples/ keep to 100 columns, "# " included.
COMMENT_WIDTH = 98
# The guardrails a Go target adds: its binary's size is part of what a user ships.
# The placeholder workload's arguments: options, then an input under data/.
EXAMPLE_ARGS = ["--option", "value", "data/typical.txt"]
GUARDRAILS = {"go": ["cpu", "memory", "binary_size"], "python": ["cpu", "memory"]}


@dataclass(frozen=True)
class TimingNotes:
    """The first run's figures, as comment lines at the manifest's end."""

    sandbox: str
    lines: tuple[str, ...]


def comment(text: str) -> str:
    """`text` wrapped to comment lines: the first line's `# ` is the template's."""
    return "\n# ".join(textwrap.wrap(text, COMMENT_WIDTH - 2, break_on_hyphens=False) or [""])


def roots_said(roots: Sequence[str]) -> str:
    """Source roots as a sentence says them: `.` alone would read as a stray full stop."""
    return ", ".join(". (the project folder)" if root == "." else root for root in roots)


def chosen_entry(project: Project, draft: WorkloadDraft | None) -> EntryPoint | None:
    """The entry point the manifest's [target] starts: the command line's, else the first."""
    if draft is not None:
        return draft.entry
    return project.entry_points[0] if project.entry_points else None


def _others(project: Project, entry: EntryPoint | None) -> list[str]:
    lines = []
    for other in project.entry_points:
        if entry is not None and other.target == entry.target:
            continue
        keys = ", ".join(f"{k} = {toml_value(v)}" for k, v in other.target.items())
        lines.append(f"Another entry point: {other.name} ({other.source}): {keys}")
    return lines


def render(
    project: Project,
    draft: WorkloadDraft | None,
    manifest_arg: str,
    derived: Derived | None = None,
    timings: TimingNotes | None = None,
) -> str:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("speedproof.init", "."),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    environment.filters["toml"] = toml_value
    environment.filters["comment"] = comment
    environment.filters["shell"] = shlex.join
    environment.filters["roots"] = roots_said
    entry = chosen_entry(project, draft)
    folders: Sequence[str] = draft.folders if draft is not None else ()
    return environment.get_template(TEMPLATE).render(
        project=project,
        draft=draft,
        entry=entry,
        others=_others(project, entry),
        manifest_arg=manifest_arg,
        example_args=toml_value(EXAMPLE_ARGS)[1:-1],
        # A leading `/` anchors a protected path at this folder, as in .gitignore.
        protect_paths=[f if f.startswith("..") else f"/{f}" for f in folders],
        guardrails=GUARDRAILS[project.language],
        bench_example=bench_example(project.benchmarks[0]) if project.benchmarks else [],
        derived=derived or Derived(),
        timings=timings,
    )


def write_manifest(root: Path, text: str, *, force: bool) -> Path:
    """Write `text` as the manifest in `root`; an existing one is kept unless `force`."""
    path = writable(root, force=force)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InfrastructureError(f"cannot write {path}: {exc.strerror}") from exc
    return path


def writable(root: Path, *, force: bool) -> Path:
    """The manifest's path in `root`; UsageProblem when one is there and `force` is not given."""
    path = root / MANIFEST_NAME
    if path.exists() and not force:
        raise UsageProblem(
            f"{path} already exists; init does not overwrite a manifest: pass --force to "
            "replace it, or check it with `speedproof manifest validate`"
        )
    return path
