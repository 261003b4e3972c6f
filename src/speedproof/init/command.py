"""`speedproof init`, step by step: detect, draft the workload, write, run once, validate.

Exit status: 0 when the manifest validates and the first run found nothing wrong (the baseline
builds, every workload exits as expected and repeats its own output), 1 when the manifest was
written but does not validate or the first run failed, 2 when nothing was written because the
request was unusable (not a Go or Python project, a manifest already there without --force, a
command line naming no entry point), 3 on an unexpected error, as for every other command.
A workload that is too short or noisy is a warning, not a failure: it can still be judged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from speedproof.init.bench_manifest import write_bench_manifest
from speedproof.init.checks import Validation, uncommitted, validate
from speedproof.init.derive import Derived, derive, derived_inputs
from speedproof.init.detect import detect_project
from speedproof.init.first_run import FirstRun, Progress, first_run
from speedproof.init.model import Project, ProjectLanguage, UsageProblem, WorkloadDraft
from speedproof.init.notes import could_not_derive, timing_notes
from speedproof.init.workload import draft_workload
from speedproof.init.write import chosen_entry, render, writable, write_manifest

EXIT_VALID = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


def _quiet(message: str) -> None:
    """The default progress sink: say nothing."""


@dataclass(frozen=True)
class InitOptions:
    path: Path = Path(".")
    # The command line after `--`: empty writes placeholder workloads.
    command: tuple[str, ...] = ()
    force: bool = False
    stdin: Path | None = None
    run: bool = True
    allow_unsandboxed: bool = False
    language: ProjectLanguage | None = None
    # Where relative paths in `command` and `stdin` are read from: where the user typed them.
    cwd: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True)
class InitReport:
    manifest: Path
    project: Project
    draft: WorkloadDraft | None
    first: FirstRun
    validation: Validation
    # What init itself found wrong (an entry point `python -m` would not call) and advice.
    problems: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    # The workloads, holdout and twins init derived from the command, and what it could not.
    derived: Derived = field(default_factory=Derived)
    missing: tuple[str, ...] = ()
    # speedproof-bench.toml, when the project's Go benchmarks were written as its workloads.
    bench_manifest: Path | None = None

    @property
    def exit_code(self) -> int:
        failed = self.first.ran and not self.first.ok
        return EXIT_INVALID if failed or self.problems or not self.validation.valid else EXIT_VALID

    def to_json(self) -> dict[str, Any]:
        return {
            "manifest": str(self.manifest),
            "project": self.project.to_json(),
            "workload": None if self.draft is None else self.draft.to_json(),
            "first_run": self.first.to_json(),
            "valid": self.validation.valid,
            "validation": self.validation.message,
            "problems": list(self.problems),
            "advice": list(self.advice),
            "derived": asdict(self.derived),
            "could_not_derive": list(self.missing),
            "bench_manifest": None if self.bench_manifest is None else str(self.bench_manifest),
            "exit_code": self.exit_code,
        }


def run_init(options: InitOptions, progress: Progress = _quiet) -> InitReport:
    """Everything `speedproof init` does; UsageProblem when nothing could be written."""
    root = (options.cwd / options.path).resolve()
    if not root.is_dir():
        raise UsageProblem(f"{options.path}: no such folder")
    progress(f"reading the project in {root}")
    project = detect_project(root, options.language)
    draft = None
    if options.command:
        draft = draft_workload(project, options.command, cwd=options.cwd, stdin=options.stdin)
    writable(root, force=options.force)
    derived = derive(project, draft)
    bench, bench_missing = write_bench_manifest(project, force=options.force)
    shown = os.path.relpath(root, options.cwd)
    path = write_manifest(root, render(project, draft, shown, derived), force=options.force)
    progress(f"wrote {path}")
    first = FirstRun(ran=False, note="--no-run: nothing was built or timed")
    dropped: list[str] = []
    if options.run:
        first = first_run(path, allow_unsandboxed=options.allow_unsandboxed, progress=progress)
        derived, first, dropped = _without_failed(derived, first)
        text = render(project, draft, shown, derived, timing_notes(first))
        write_manifest(root, text, force=True)
    progress("validating the manifest")
    entry = chosen_entry(project, draft)
    problems = (entry.problem,) if entry is not None and entry.problem else ()
    return InitReport(
        manifest=path,
        project=project,
        draft=draft,
        first=first,
        validation=validate(path),
        problems=problems,
        advice=tuple(_advice(root, draft, derived)),
        derived=derived,
        missing=tuple(could_not_derive(derived, dropped, bench_missing)),
        bench_manifest=bench,
    )


def _without_failed(derived: Derived, first: FirstRun) -> tuple[Derived, FirstRun, list[str]]:
    """A derived workload whose baseline fails is left out, and said to be: it was init's
    guess, not the user's command, so it does not fail init."""
    failed = {t.id: t.message for t in first.workloads if t.status == "failed"}
    gone = [w for w in derived.workloads if w.id in failed]
    if not gone:
        return derived, first, []
    ids = {w.id for w in gone}
    said = tuple(f"workload {i!r}:" for i in ids)
    first = replace(
        first,
        workloads=tuple(t for t in first.workloads if t.id not in ids),
        problems=tuple(p for p in first.problems if not p.startswith(said)),
    )
    kept = tuple(w for w in derived.workloads if w.id not in ids)
    dropped = [
        f"workload {w.id} ({w.how}): its baseline run failed, so it was left out: {failed[w.id]}"
        for w in gone
    ]
    return replace(derived, workloads=kept), first, dropped


def _advice(root: Path, draft: WorkloadDraft | None, derived: Derived) -> Sequence[str]:
    names = [] if draft is None else [*draft.files, *([draft.stdin] if draft.stdin else [])]
    return uncommitted(root, [*names, *derived_inputs(derived)])
