"""`speedproof fn …`: function mode on the command line. The main CLI mounts `fn_app`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from speedproof.cli_errors import fail
from speedproof.functions.case import load_case
from speedproof.functions.verify import VerifyResult, verify_candidate, verify_patch

fn_app = typer.Typer(
    help="Function mode: verify a rewrite of a restricted pure-Python function in a sandbox "
    "(correct on hidden inputs first, then fewer Cachegrind instructions).",
    no_args_is_help=True,
)

EXIT_PASSED = 0
EXIT_REJECTED = 1
EXIT_INFRASTRUCTURE = 3

_STYLE = {"passed": "bold green", "no_speedup": "yellow", "infrastructure_error": "bold magenta"}


@fn_app.callback()
def _group() -> None:
    """Function mode: restricted pure-Python functions, verified in a sandbox."""


def exit_code(result: VerifyResult) -> int:
    """0 passed, 3 the verifier could not judge, 1 any candidate failure."""
    if result.status == "passed":
        return EXIT_PASSED
    if result.status in ("infrastructure_error", "unstable"):
        return EXIT_INFRASTRUCTURE
    return EXIT_REJECTED


def _show(result: VerifyResult, console: Console) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    style = _STYLE.get(result.status, "bold red")
    table.add_row("status", f"[{style}]{result.status}[/] ({result.category})")
    table.add_row("detail", result.detail)
    if result.reward is not None:
        table.add_row("reward", f"{result.reward:.4f}  (function-only log ratio)")
    if result.reward_whole_process is not None:
        table.add_row("whole-process", f"{result.reward_whole_process:.4f}")
    if result.ref_ir is not None and result.cand_ir is not None:
        table.add_row("Ir (function)", f"{result.ref_ir:,} → {result.cand_ir:,}")
    if result.ref_ir_whole is not None and result.cand_ir_whole is not None:
        table.add_row("Ir (process)", f"{result.ref_ir_whole:,} → {result.cand_ir_whole:,}")
    table.add_row("checked", f"{result.inputs_checked} inputs, {result.runs} runs per count")
    table.add_row("time", f"{result.duration_s:.1f} s, verifier {result.verifier_digest[:12]}")
    console.print(table)


@fn_app.command("verify")
def verify_command(
    case: Annotated[Path, typer.Argument(help="Case JSON file.")],
    candidate: Annotated[
        Path,
        typer.Argument(
            help="A .py file with the whole function, or a patch (.patch, .diff, .txt)."
        ),
    ],
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    seed: Annotated[int | None, typer.Option(help="Seed of the random inputs.")] = None,
    random: Annotated[int, typer.Option(help="How many random inputs.")] = 64,
    runs: Annotated[int, typer.Option(help="Cachegrind runs per count (at least 2).")] = 2,
) -> None:
    """Verify CANDIDATE against CASE: exit 0 passed, 1 rejected, 3 infrastructure error."""
    console = Console()
    try:
        loaded = load_case(case)
        text = candidate.read_text(encoding="utf-8")
    except (OSError, ValidationError, ValueError) as exc:
        kind = type(exc).__name__
        raise fail(f"cannot read input: {exc}", as_json=json_output, kind=kind) from exc
    if candidate.suffix == ".py":
        result = verify_candidate(loaded, text, seed=seed, random_count=random, runs=runs)
    else:
        result = verify_patch(loaded, text, seed=seed, random_count=random, runs=runs)
    if json_output:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _show(result, console)
    raise typer.Exit(exit_code(result))
