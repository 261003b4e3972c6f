"""The command line. Thin: parse, call one function per command, print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from speedproof.advisor.cli import register as register_advisor
from speedproof.calibration.command import register as register_calibrate
from speedproof.campaign.command import register as register_optimize
from speedproof.cli_options import HoldoutDirOption
from speedproof.corpus.cli import register as register_corpus
from speedproof.errors import SpeedproofError
from speedproof.functions.cli import fn_app
from speedproof.ledger import Ledger
from speedproof.manifest import MANIFEST_NAME, load_manifest
from speedproof.verify_command import register as register_verify

app = typer.Typer(
    help="speedproof: models guess, code proves. Judge and find speedups you can trust.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
manifest_app = typer.Typer(help="Check a target's manifest.", no_args_is_help=True)
ledger_app = typer.Typer(help="Read the ledger of judged candidates.", no_args_is_help=True)
app.add_typer(manifest_app, name="manifest")
app.add_typer(ledger_app, name="ledger")
register_corpus(fn_app)
app.add_typer(fn_app, name="fn", help="Function mode: verify, corpus, collect, sft, train, eval.")
register_calibrate(app)
register_verify(app)
register_optimize(app)
register_advisor(app)

console = Console()
errors = Console(stderr=True)

EXIT_USAGE = 3

LedgerOption = Annotated[
    Path,
    typer.Option("--ledger", help="Ledger folder (default: .speedproof next to the manifest)."),
]


def fail(message: str) -> typer.Exit:
    errors.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(EXIT_USAGE)


@manifest_app.command("validate")
def manifest_validate(
    path: Annotated[Path, typer.Argument(help=f"A {MANIFEST_NAME} or the folder holding it.")],
) -> None:
    """Validate a manifest; errors name the key and the line."""
    try:
        loaded = load_manifest(path)
    except SpeedproofError as exc:
        raise fail(str(exc)) from exc
    manifest = loaded.manifest
    tiers = ", ".join(f"{w.id} ({w.tier})" for w in manifest.workloads)
    console.print(
        f"[green]valid[/] {loaded.path}: {manifest.target.name} ({manifest.target.language})"
    )
    console.print(f"workloads: {tiers}")


def _open_ledger(folder: Path) -> Ledger:
    if not folder.exists():
        raise fail(f"no ledger at {folder}")
    return Ledger.in_folder(folder)


@ledger_app.command("list")
def ledger_list(
    ledger: LedgerOption = Path(".speedproof"),
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
) -> None:
    """List judged candidates, newest first."""
    with _open_ledger(ledger) as book:
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
    with _open_ledger(ledger) as book:
        try:
            record = book.show(candidate_id)
        except SpeedproofError as exc:
            raise fail(str(exc)) from exc
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
        console.print(f"  - {reason}", highlight=False)
    if verdict.get("error"):
        console.print(f"  error: {verdict['error']}", highlight=False)
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
) -> None:
    """Write report.html, report.md and report.json for a campaign folder."""
    from speedproof.report import write_report

    try:
        paths = write_report(folder, out=out)
    except SpeedproofError as exc:
        raise fail(str(exc)) from exc
    console.print(f"wrote {paths.html}, {paths.markdown} and {paths.json}")


EXIT_FOR_VERDICT = {"accepted": 0, "rejected": 1, "inconclusive": 2}


@app.command("judge")
def judge_command(
    patch: Annotated[Path, typer.Argument(help="A unified diff, relative to the repository root.")],
    manifest: Annotated[Path, typer.Option("--manifest", "-m", help="The target's manifest.")] = (
        Path(MANIFEST_NAME)
    ),
    repo: Annotated[
        Path | None, typer.Option(help="The git repository (default: the manifest's).")
    ] = None,
    base: Annotated[str, typer.Option(help="Base revision the patch applies to.")] = "HEAD",
    pairs: Annotated[
        int | None, typer.Option(min=4, help="Pairs per workload (default: the manifest's).")
    ] = None,
    ledger: Annotated[
        Path | None, typer.Option("--ledger", help="Ledger folder (default: .speedproof).")
    ] = None,
    no_sandbox: Annotated[
        bool,
        typer.Option("--no-sandbox", help="Run without bubblewrap. Recorded in the ledger."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    holdout_dir: HoldoutDirOption = None,
) -> None:
    """Prove or refuse one patch: exit 0 accepted, 1 rejected, 2 inconclusive, 3 error."""
    from speedproof.judging import judge_patch

    try:
        outcome = judge_patch(
            patch,
            manifest,
            repo=repo,
            base=base,
            pairs=pairs,
            ledger_dir=ledger,
            allow_unsandboxed=no_sandbox,
            quiet=as_json,
            holdout_dir=holdout_dir,
        )
    except SpeedproofError as exc:
        raise fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(outcome.to_json(), indent=2))
    raise typer.Exit(EXIT_FOR_VERDICT[outcome.verdict.verdict])


def main() -> None:
    app()


if __name__ == "__main__":
    main()
