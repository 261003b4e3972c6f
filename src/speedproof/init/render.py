"""What `speedproof init` prints: what it found, the first run's table, the validation, and the
exit status; or, with `--json`, one JSON object (an error too, as every `--json` command does)."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from speedproof.cli_errors import error_document, fail_on
from speedproof.console import report_console
from speedproof.ground.errors import SpeedproofError
from speedproof.init.command import EXIT_USAGE, InitOptions, InitReport, run_init
from speedproof.init.first_run import FirstRun, WorkloadTiming
from speedproof.init.length import GUESS_BELOW_PAIRS, spread_words
from speedproof.init.model import Project, UsageProblem, WorkloadDraft
from speedproof.init.write import roots_said

_STATUS_STYLE = {
    "long enough": "green",
    "too short": "yellow",
    "failed": "red",
    "not timed": "dim",
}


def init_main(options: InitOptions, *, as_json: bool) -> int:
    """Run init, print its report, and return the exit status."""
    progress = Console(stderr=True, quiet=as_json)
    try:
        report = run_init(options, lambda m: progress.print(f"[dim]init:[/] {escape(m)}"))
    except UsageProblem as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        if as_json:
            document = {**error_document(str(exc), "UsageProblem"), "exit_code": EXIT_USAGE}
            typer.echo(json.dumps(document, indent=2))
        return EXIT_USAGE
    except SpeedproofError as exc:
        raise fail_on(exc, as_json=as_json) from exc
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        show(report, report_console(highlight=False))
    return report.exit_code


def show(report: InitReport, console: Console) -> None:
    _found(report.project, report.draft, console)
    console.print(f"wrote {escape(str(report.manifest))}")
    _first_run(report.first, console)
    for line in [*report.problems, *report.advice]:
        console.print(f"[yellow]note:[/] {escape(line)}")
    if report.validation.valid:
        console.print(f"[green]manifest validate:[/] {escape(report.validation.message)}")
    else:
        console.print("[bold red]manifest validate:[/] " + escape(report.validation.message))
    if report.bench_manifest is not None:
        said = f"wrote {report.bench_manifest}: the Go benchmarks as workloads of the reported lane"
        console.print(escape(said))
    if report.missing:
        console.print("[yellow]could not derive:[/]")
        for line in report.missing:
            console.print(f"  - {escape(line)}")
    verdict = "[green]ready to judge[/]" if report.exit_code == 0 else "[red]not ready[/]"
    console.print(f"{verdict}: speedproof judge PATCH --manifest {escape(str(report.manifest))}")


def _found(project: Project, draft: WorkloadDraft | None, console: Console) -> None:
    console.print(
        f"[bold]{escape(project.name)}[/]: {project.language} ({escape(project.marker)}), "
        f"{escape(project.toolchain)}"
    )
    table = Table.grid(padding=(0, 2))
    for entry in project.entry_points:
        keys = ", ".join(f"{k} {v}" for k, v in entry.target.items())
        table.add_row("entry point", escape(f"{entry.name}: {keys} ({entry.source})"))
    if project.language == "python":
        interpreter = project.interpreter or "the Python running speedproof"
        table.add_row("interpreter", escape(f"{interpreter} ({project.interpreter_note})"))
        table.add_row("source roots", escape(roots_said(project.source_roots)))
    tests = project.tests
    table.add_row("tests", escape(f"{tests.runner} {' '.join(tests.args)} ({tests.found_by})"))
    for bench in project.benchmarks:
        table.add_row("benchmark", escape(f"{bench.kind} {bench.name} ({bench.where})"))
    if draft is not None:
        inputs = ", ".join([*draft.files, *([f"stdin {draft.stdin}"] if draft.stdin else [])])
        said = f"{draft.id}: {' '.join(draft.args)}" + (f" (inputs: {inputs})" if inputs else "")
        table.add_row("workload", escape(said))
    for warning in [*project.warnings, *(draft.warnings if draft else ())]:
        table.add_row("[yellow]note[/]", escape(warning))
    console.print(table)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _row(timing: WorkloadTiming) -> list[str]:
    spread = "-"
    if timing.spread_pct is not None:
        spread = spread_words(timing.spread_pct, timing.pairs)
    span = "-" if timing.min_ms is None else f"{_ms(timing.min_ms)}–{_ms(timing.max_ms)}"
    share = "-" if timing.startup_share is None else f"{timing.startup_share * 100:.0f}%"
    win = "-"
    if timing.resolvable_win_pct is not None:
        win = f"{timing.resolvable_win_pct:.1f}% at {timing.judge_pairs} pairs"
    style = _STATUS_STYLE[timing.status]
    return [
        escape(timing.id),
        timing.tier,
        _ms(timing.median_ms),
        span,
        spread,
        share,
        win,
        f"[{style}]{timing.status}[/]",
    ]


def _count(pairs: list[int]) -> str:
    low, high = min(pairs), max(pairs)
    return f"{low}" if low == high else f"{low}-{high}"


def _first_run(first: FirstRun, console: Console) -> None:
    if not first.ran:
        console.print(f"first run: skipped ({escape(first.note)})")
        return
    if first.build_s is not None:
        built = "built" if first.build_ok else "[red]did not build[/]"
        startup = "" if first.startup_ms is None else f"; start-up {_ms(first.startup_ms)}"
        console.print(f"first run ({first.sandbox}): {built} in {first.build_s:.2f} s{startup}")
    if first.workloads:
        table = Table(
            "workload",
            "tier",
            "median",
            "range",
            "robust spread",
            "start-up",
            "win found 9 in 10",
            "long enough?",
        )
        for timing in first.workloads:
            table.add_row(*_row(timing))
        console.print(table)
        guessed = [t.pairs for t in first.workloads if t.spread_pct is not None]
        if guessed and min(guessed) < GUESS_BELOW_PAIRS:
            console.print(
                f"spread: a guess from {_count(guessed)} pairs; the judge does not use "
                "it: it measures its own noise on every judgement, and a win inside that noise "
                "ends inconclusive"
            )
        for timing in first.workloads:
            style = _STATUS_STYLE[timing.status]
            said = f"{timing.id}: {timing.status}: {timing.message}"
            console.print(f"[{style}]{escape(said)}[/]")
    if first.note:
        console.print(f"first run: {escape(first.note)}")
    # A workload's failure was said on its own line above.
    shown = tuple(f"workload {t.id!r}:" for t in first.workloads)
    for problem in first.problems:
        if not shown or not problem.startswith(shown):
            console.print(f"[bold red]first run:[/] {escape(problem)}")
