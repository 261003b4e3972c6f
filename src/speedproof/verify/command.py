"""The `speedproof verify` command: re-judge accepted candidates, print which still hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from speedproof.cli_errors import fail_on
from speedproof.cli_options import HoldoutDirOption
from speedproof.errors import SpeedproofError
from speedproof.judge.patches import LEDGER_FOLDER
from speedproof.ledger import Ledger
from speedproof.manifest import MANIFEST_NAME, load_manifest
from speedproof.sandbox import make_sandbox
from speedproof.verify.verification import Recheck, Verification, accepted_candidates

EXIT_FLAGGED = 1
EXIT_ERROR = 3


def render_rechecks(checks: list[Recheck], console: Console) -> None:
    table = Table("mode", "candidates", "base", "verdict", "holds", "figure", "reason")
    for check in checks:
        holds = "[green]yes[/]" if check.holds else "[bold red]NO[/]"
        table.add_row(
            check.mode,
            ", ".join(map(str, check.candidates)),
            check.base_rev[:12],
            check.verdict,
            holds,
            check.figure,
            check.reasons[0] if check.reasons else "",
        )
    console.print(table)
    flagged = [c for c in checks if not c.holds]
    if flagged:
        console.print(f"[bold red]{len(flagged)} check(s) no longer hold; flagged in the ledger.")


def verify_command(
    manifest: Annotated[Path, typer.Option("--manifest", "-m", help="The target's manifest.")] = (
        Path(MANIFEST_NAME)
    ),
    ledger: Annotated[
        Path | None, typer.Option("--ledger", help="Ledger folder (default: .speedproof).")
    ] = None,
    campaign: Annotated[
        str | None, typer.Option(help="Only this campaign's accepted candidates.")
    ] = None,
    candidate: Annotated[
        list[int] | None, typer.Option("--candidate", help="Only these candidate ids.")
    ] = None,
    pairs: Annotated[
        int | None,
        typer.Option(
            min=4,
            help="A fixed number of pairs per workload (default: the judge's sequential rule "
            "with twice its time budget).",
        ),
    ] = None,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="Run without bubblewrap. Recorded.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    holdout_dir: HoldoutDirOption = None,
) -> None:
    """Re-measure accepted candidates alone and stacked; exit 1 if any no longer holds."""
    try:
        loaded = load_manifest(manifest)
        sandbox = make_sandbox(allow_unsandboxed=no_sandbox)
        progress = Console(stderr=True, quiet=as_json)
        with Ledger.in_folder(ledger or loaded.root / LEDGER_FOLDER) as book:
            chosen = accepted_candidates(book, campaign=campaign, ids=candidate or ())
            checks = Verification(
                loaded,
                sandbox=sandbox,
                ledger=book,
                pairs=pairs,
                holdout_dir=holdout_dir,
                progress=lambda stage, message: progress.print(f"[dim]{stage}:[/] {message}"),
            ).run(chosen)
    except SpeedproofError as exc:
        raise fail_on(exc, as_json=as_json) from exc
    if as_json:
        typer.echo(json.dumps([c.to_json() for c in checks], indent=2))
    else:
        render_rechecks(checks, Console(width=160))
    if not all(c.holds for c in checks):
        raise typer.Exit(EXIT_FLAGGED)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
