"""The `speedproof verify` command: re-judge accepted candidates, print which still hold.

With `--cluster SPEC --elsewhere`, each accepted candidate is re-measured on another node of
the cluster than the one that accepted it instead (`verify.elsewhere`), and the table names both
machines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from speedproof.cli_errors import fail_on
from speedproof.cli_options import HoldoutDirOption
from speedproof.cluster.preflight import judge_needs
from speedproof.cluster.spec import open_cluster
from speedproof.console import report_console, stage_line
from speedproof.ground.errors import SpeedproofError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.patches import LEDGER_FOLDER
from speedproof.ledger import Ledger
from speedproof.manifest import MANIFEST_NAME
from speedproof.manifest_loading import load_manifest
from speedproof.verify.elsewhere import Elsewhere, ElsewhereVerification
from speedproof.verify.verification import Recheck, Verification, accepted_candidates

EXIT_FLAGGED = 1
EXIT_ERROR = 3


class VerifyOptionsError(SpeedproofError):
    """`--cluster` and `--elsewhere` go together."""


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
    _flagged(sum(not c.holds for c in checks), console)


def render_elsewhere(found: list[Elsewhere], console: Console) -> None:
    table = Table(
        "candidate",
        "accepted on",
        "re-measured on",
        "verdict",
        "holds",
        "elsewhere",
        "figure",
        "reason",
    )
    for item in found:
        check = item.check
        table.add_row(
            ", ".join(map(str, check.candidates)),
            machine(item.accepted_on),
            machine(item.measured_on),
            check.verdict,
            "[green]yes[/]" if check.holds else "[bold red]NO[/]",
            "[green]yes[/]" if item.elsewhere else "[bold red]NO: same host[/]",
            check.figure,
            check.reasons[0] if check.reasons else "",
        )
    console.print(table)
    _flagged(sum(not item.holds for item in found), console)
    same = sum(not item.elsewhere for item in found)
    if same:
        console.print(
            f"[bold red]{same} check(s) were not measured elsewhere: the node that re-measured "
            "shares the accepting node's host (or a host is not known); add a node on another "
            "machine."
        )


def machine(node: dict[str, Any]) -> str:
    """A node's facts in a cell: its id, host, CPU model, cores and load."""
    facts = node.get("environment") or {}
    load = facts.get("load_1m")
    shown = f"{load:.2f}" if isinstance(load, int | float) else "?"
    return (
        f"{str(node.get('id', '?'))[:12]} on {node.get('hostname', '?')}\n"
        f"{facts.get('cpu_model', '?')}, {facts.get('cores', '?')} cores, load {shown}"
    )


def _flagged(count: int, console: Console) -> None:
    if count:
        console.print(f"[bold red]{count} check(s) no longer hold; flagged in the ledger.")


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
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="With --elsewhere: the cluster to re-measure on (local, ray or ray://HOST:PORT).",
        ),
    ] = None,
    elsewhere: Annotated[
        bool,
        typer.Option(
            "--elsewhere",
            help="Re-measure each accepted candidate on another node of --cluster than the one "
            "that accepted it, and say whether it held there.",
        ),
    ] = False,
) -> None:
    """Re-measure accepted candidates alone and stacked; exit 1 if any no longer holds."""
    try:
        if elsewhere != (cluster is not None):
            raise VerifyOptionsError(
                "--elsewhere needs --cluster (the nodes to re-measure on)"
                if elsewhere
                else "--cluster is for --elsewhere: re-measuring on another node"
            )
        loaded = load_manifest(manifest)
        console = Console(stderr=True, quiet=as_json)

        def progress(stage: str, message: str) -> None:
            console.print(stage_line(stage, message))

        with Ledger.in_folder(ledger or loaded.root / LEDGER_FOLDER) as book:
            chosen = accepted_candidates(book, campaign=campaign, ids=candidate or ())
            if cluster is None:
                checks: list[Recheck] | list[Elsewhere] = Verification(
                    loaded,
                    sandbox=make_sandbox(allow_unsandboxed=no_sandbox),
                    ledger=book,
                    pairs=pairs,
                    holdout_dir=holdout_dir,
                    progress=progress,
                ).run(chosen)
            else:
                needs = judge_needs(
                    loaded.manifest.target.language,
                    loaded.manifest.counts_instructions,
                    sandboxed=not no_sandbox,
                )
                with open_cluster(cluster, needs=needs) as opened:
                    checks = ElsewhereVerification(
                        loaded,
                        cluster=opened,
                        ledger=book,
                        unsandboxed=no_sandbox,
                        pairs=pairs,
                        holdout_dir=holdout_dir,
                        progress=progress,
                    ).run(chosen)
    except SpeedproofError as exc:
        raise fail_on(exc, as_json=as_json) from exc
    _show(checks, as_json)


def _show(checks: list[Recheck] | list[Elsewhere], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps([c.to_json() for c in checks], indent=2))
    else:
        rechecks = [c for c in checks if isinstance(c, Recheck)]
        moved = [c for c in checks if isinstance(c, Elsewhere)]
        if rechecks:
            render_rechecks(rechecks, report_console(least_width=160))
        if moved:
            render_elsewhere(moved, report_console(least_width=160))
    if not all(c.proven if isinstance(c, Elsewhere) else c.holds for c in checks):
        raise typer.Exit(EXIT_FLAGGED)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
