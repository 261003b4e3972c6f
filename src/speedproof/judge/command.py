"""`speedproof judge`: prove or refuse one patch; the exit status is the verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from speedproof.cli_errors import fail_on
from speedproof.cli_options import HoldoutDirOption
from speedproof.ground.errors import SpeedproofError
from speedproof.manifest import MANIFEST_NAME

EXIT_FOR_VERDICT = {"accepted": 0, "rejected": 1, "inconclusive": 2}


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
    from speedproof.judge.patches import judge_patch

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
        raise fail_on(exc, as_json=as_json) from exc
    if as_json:
        typer.echo(json.dumps(outcome.to_json(), indent=2))
    raise typer.Exit(EXIT_FOR_VERDICT[outcome.verdict.verdict])


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
