"""The command line. Thin: parse, call one function per command, print.

Start-up is paid by every command, a guard reject included, so this module imports only what
`manifest`, `ledger`, `judge` and `report` need to parse their options. The other commands
(`calibrate`, `verify`, `optimize`, `fn`, `advisor`) live in modules that pull in scipy, the
model clients and function mode: `_LAZY` names them with the one line `--help` shows, and
`_LazyGroup` imports a module only when its command runs (or its own `--help` is asked for).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand, TyperGroup

from speedproof.cli_errors import fail, fail_on
from speedproof.console import listed, report_console
from speedproof.ground.errors import SpeedproofError
from speedproof.init.arguments import SplitAtDashes, command_of
from speedproof.judge.command import EXIT_FOR_VERDICT as EXIT_FOR_VERDICT
from speedproof.judge.command import register as register_judge
from speedproof.ledger import Ledger
from speedproof.manifest import MANIFEST_NAME
from speedproof.manifest_loading import load_manifest

if TYPE_CHECKING:
    # typer 0.2x carries its own copy of click; its groups take these classes.
    from typer import _click

FN_HELP = "Function mode: verify, corpus, collect, sft, train, eval."


def _advisor(app: typer.Typer) -> None:
    from speedproof.advisor.cli import register

    register(app)


def _calibrate(app: typer.Typer) -> None:
    from speedproof.calibration.command import register

    register(app)


def _verify(app: typer.Typer) -> None:
    from speedproof.verify.command import register

    register(app)


def _optimize(app: typer.Typer) -> None:
    from speedproof.campaign.command import register

    register(app)


def _fn(app: typer.Typer) -> None:
    from speedproof.corpus.cli import register
    from speedproof.functions.cli import fn_app

    register(fn_app)
    app.add_typer(fn_app, name="fn", help=FN_HELP)


@dataclass(frozen=True)
class _Lazy:
    # The line `speedproof --help` lists; tests/cli/test_cli_startup.py holds it to the
    # command's own.
    help: str
    register: Callable[[typer.Typer], None]


_LAZY = {
    "calibrate": _Lazy(
        "How far to trust verdicts here: false accepts, false rejects and power, measured.",
        _calibrate,
    ),
    "verify": _Lazy(
        "Re-measure accepted candidates alone and stacked; exit 1 if any no longer holds.",
        _verify,
    ),
    "optimize": _Lazy(
        "Find proven speedups: propose, judge and keep what is accepted, until an exit condition.",
        _optimize,
    ),
    "fn": _Lazy(FN_HELP, _fn),
    "advisor": _Lazy(
        "The advisor: calibrated yes/no cause questions. Measure baselines, watch for drift.",
        _advisor,
    ),
}
# Each lazy command, built once per process (registering function mode twice would add its
# corpus commands twice).
_LOADED: dict[str, _click.Command] = {}


def lazy_command(name: str) -> _click.Command:
    """The real click command behind a lazy name, importing its module now."""
    if name not in _LOADED:
        scratch = typer.Typer()
        _LAZY[name].register(scratch)
        _LOADED[name] = typer.main.get_group(scratch).commands[name]
    return _LOADED[name]


class _LazyGroup(TyperGroup):
    """The top-level group: lazy commands are listed from `_LAZY` and imported when they run."""

    _listing = False

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*super().list_commands(ctx), *_LAZY]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name not in _LAZY:
            return super().get_command(ctx, cmd_name)
        if self._listing:
            # A stand-in that carries the listed line: enough for the commands panel.
            return TyperCommand(cmd_name, help=_LAZY[cmd_name].help)
        return lazy_command(cmd_name)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    cls=_LazyGroup,
    help="speedproof: models guess, code proves. Judge and find speedups you can trust.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
manifest_app = typer.Typer(help="Check a target's manifest.", no_args_is_help=True)
ledger_app = typer.Typer(help="Read the ledger of judged candidates.", no_args_is_help=True)
app.add_typer(manifest_app, name="manifest")
app.add_typer(ledger_app, name="ledger")

console = report_console()
_errors = Console(stderr=True)


LedgerOption = Annotated[
    Path,
    typer.Option("--ledger", help="Ledger folder (default: .speedproof next to the manifest)."),
]


@manifest_app.command("validate")
def manifest_validate(
    path: Annotated[Path, typer.Argument(help=f"A {MANIFEST_NAME} or the folder holding it.")],
) -> None:
    """Validate a manifest and what it names (inputs, interpreter, module, Go dependencies);
    errors name the key, the line and a fix, and any of them exits 3."""
    # Imported here: the checks reach the toolchains, which no other command's start-up needs.
    from speedproof.ground.errors import ManifestError
    from speedproof.preflight import check, describe

    try:
        loaded = load_manifest(path)
    except SpeedproofError as exc:
        raise fail_on(exc) from exc
    problems = check(loaded)
    if problems:
        raise fail_on(ManifestError(describe(loaded, problems)))
    manifest = loaded.manifest
    tiers = ", ".join(f"{w.id} ({w.tier})" for w in manifest.workloads)
    console.print(
        f"[green]valid[/] {loaded.path}: {manifest.target.name} ({manifest.target.language})"
    )
    console.print(f"workloads: {tiers}")


def _open_ledger(folder: Path, *, as_json: bool = False) -> Ledger:
    if not folder.exists():
        raise fail(f"no ledger at {folder}", as_json=as_json, kind="InfrastructureError")
    try:
        return Ledger.in_folder(folder)
    except SpeedproofError as exc:
        raise fail_on(exc, as_json=as_json) from exc


@ledger_app.command("list")
def ledger_list(
    ledger: LedgerOption = Path(".speedproof"),
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
) -> None:
    """List judged candidates, newest first."""
    with _open_ledger(ledger, as_json=as_json) as book:
        rows = book.entries(limit)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("id", "when", "origin", "target", "base", "sandbox", "status", "rests on")
    for row in rows:
        table.add_row(
            str(row["id"]),
            row["created_at"][:19],
            row["origin"],
            row["target"],
            row["base_rev"][:10],
            row["sandbox"],
            row["status"],
            row["rests_on"] or "",
        )
    console.print(table)


@ledger_app.command("show")
def ledger_show(
    candidate_id: Annotated[int, typer.Argument(help="Candidate id.")],
    ledger: LedgerOption = Path(".speedproof"),
    as_json: Annotated[bool, typer.Option("--json", help="The whole record as JSON.")] = False,
) -> None:
    """Show one candidate: diff, gates, comparisons, verdict."""
    with _open_ledger(ledger, as_json=as_json) as book:
        try:
            record = book.show(candidate_id)
        except SpeedproofError as exc:
            raise fail_on(exc, as_json=as_json) from exc
    if as_json:
        typer.echo(json.dumps(record, indent=2))
        return
    _print_record(record)


def _print_record(record: dict[str, Any]) -> None:
    verdict = record["verdict"] or {"verdict": "unfinished", "reasons": []}
    console.print(
        f"[bold]candidate {record['id']}[/] {record['target']} @ {record['base_rev'][:12]}"
    )
    console.print(f"verdict: [bold]{verdict['verdict'] or 'error'}[/]")
    for reason in verdict["reasons"]:
        console.print(listed(reason), highlight=False)
    if verdict.get("error"):
        console.print(listed(verdict["error"], "  error: "), highlight=False)
    gates = Table("gate", "passed", "seconds")
    for gate in record["gates"]:
        gates.add_row(gate["name"], "yes" if gate["passed"] else "NO", f"{gate['duration_s']:.2f}")
    console.print(gates)
    console.print(record["diff"], highlight=False, markup=False)


@ledger_app.command("export")
def ledger_export(
    ledger: LedgerOption = Path(".speedproof"),
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write.")] = None,
) -> None:
    """Export every record as one JSON document."""
    with _open_ledger(ledger) as book:
        text = json.dumps(book.export(), indent=2)
    if output is None:
        typer.echo(text)
    else:
        output.write_text(text + "\n", encoding="utf-8")
        console.print(f"wrote {output}")


@app.command("report")
def report_command(
    folder: Annotated[Path, typer.Argument(help="A campaign folder (holds ledger.sqlite).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the report here instead.")
    ] = None,
    single_file: Annotated[
        bool,
        typer.Option(
            "--single-file",
            help="Inline plotly.js (4.6 MB) into report.html instead of writing it beside.",
        ),
    ] = False,
) -> None:
    """Write report.html, report.md and report.json for a campaign folder."""
    from speedproof.report import write_report

    try:
        paths = write_report(folder, out=out, single_file=single_file)
    except SpeedproofError as exc:
        raise fail_on(exc) from exc
    console.print(f"wrote {paths.html}, {paths.markdown} and {paths.json}", highlight=False)
    for beside in paths.beside:
        console.print(f"wrote {beside} (report.html loads it)", highlight=False)
    if paths.plots_left_out is not None:
        # Written without plots rather than refused (see speedproof.report.html); said here too,
        # so the missing extra is not discovered only when the page is opened.
        _errors.print(
            f"note: no plots in {paths.html}: {paths.plots_left_out}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@app.command("init", cls=SplitAtDashes)
def init_command(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="The project's folder; the manifest goes there.")] = (
        Path(".")
    ),
    force: Annotated[bool, typer.Option("--force", help=f"Replace a {MANIFEST_NAME}.")] = False,
    stdin: Annotated[
        Path | None, typer.Option("--stdin", help="A file the command after -- reads on stdin.")
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="go or python, when the folder has markers of both.")
    ] = None,
    no_run: Annotated[bool, typer.Option("--no-run", help="Build and time nothing.")] = False,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="Run the first run without bubblewrap.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Write a manifest for a Go or Python project, time its baseline once, validate it.

    `speedproof init [PATH] [-- COMMAND ARGS...]`: the words after `--` are what a user runs,
    and become a representative workload. Exit 0 when the manifest validates and the first run
    worked, 1 when not, 2 when nothing was written (an existing manifest needs --force).
    """
    from speedproof.init.command import InitOptions
    from speedproof.init.render import init_main

    if language not in (None, "go", "python"):
        raise typer.BadParameter(f"{language!r}: go or python", param_hint="--language")
    options = InitOptions(
        path=path,
        command=command_of(ctx),
        force=force,
        stdin=stdin,
        run=not no_run,
        allow_unsandboxed=no_sandbox,
        language="go" if language == "go" else "python" if language == "python" else None,
    )
    raise typer.Exit(init_main(options, as_json=as_json))


# `speedproof judge` is registered at once, not lazily: a guard reject must stay fast, and the
# command's module imports nothing heavy until it runs (docs/adr/0039).
register_judge(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
