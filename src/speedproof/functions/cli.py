"""`speedproof fn …`: function mode on the command line. The main CLI mounts `fn_app`."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from speedproof.cli_errors import fail, fail_on
from speedproof.cluster.options import ClusterOption, WorkersOption
from speedproof.cluster.spec import DEFAULT_WORKERS
from speedproof.console import report_console
from speedproof.functions.case import Case, Json, load_case
from speedproof.functions.verifier import VerifyResult, verify_candidate, verify_patch
from speedproof.ground.errors import PatchError, SpeedproofError

if TYPE_CHECKING:
    from speedproof.functions.batch import Settings as BatchSettings

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


def _scale(status: str) -> str:
    """Where a reward sits on the scale of `reward_scale` (ADR 0065)."""
    if status == "passed":
        return "log ratio of charged Ir"
    if status == "no_speedup":
        return "correct, not faster: in (-0.5, 0]"
    return "wrong: the floor, below every correct answer"


def _show(result: VerifyResult, console: Console) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    style = _STYLE.get(result.status, "bold red")
    table.add_row("status", f"[{style}]{result.status}[/] ({result.category})")
    # Plain text: a detail quoting code ("[fn] …", "x[i]") is not rich markup.
    table.add_row("detail", Text(result.detail))
    if result.reward is not None:
        table.add_row("reward", f"{result.reward:.4f}  ({_scale(result.status)})")
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
    case: Annotated[Path | None, typer.Argument(help="Case JSON file.")] = None,
    candidate: Annotated[
        Path | None,
        typer.Argument(
            help="A .py file with the whole function, or a patch (.patch, .diff, .txt)."
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    seed: Annotated[int | None, typer.Option(help="Seed of the random inputs.")] = None,
    random: Annotated[int, typer.Option(help="How many random inputs.")] = 64,
    runs: Annotated[int, typer.Option(help="Cachegrind runs per count (at least 2).")] = 2,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help="JSON lines of (case or case_id, candidate or patch, optional seed, id) rows: "
            "verify them all instead of CASE CANDIDATE.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Results of --batch (JSON lines; resumable).")
    ] = None,
    cluster: ClusterOption = None,
    workers: WorkersOption = DEFAULT_WORKERS,
    cache: Annotated[
        Path | None, typer.Option(help="Verification cache of --batch rows that carry a seed.")
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option(help="Corpus where --batch rows' case_id are looked up.")
    ] = None,
    counterexample: Annotated[
        bool,
        typer.Option(
            "--counterexample",
            help="On a rejection, shrink the first failing contract input and print it "
            "(for the operator: hidden inputs are never shown to a model).",
        ),
    ] = False,
) -> None:
    """Verify CANDIDATE against CASE: exit 0 passed, 1 rejected, 3 infrastructure error.

    With --batch ROWS --out RESULTS: verify every row on the cluster; exit 0 when every row was
    judged, 3 when any could not be (its row says why).
    """
    if batch is not None:
        from speedproof.functions.batch import Settings as BatchSettings

        if case is not None or candidate is not None or out is None:
            raise fail("--batch takes --out and no CASE or CANDIDATE", as_json=json_output)
        settings = BatchSettings(random_count=random, runs=runs, corpus=corpus)
        raise typer.Exit(_verify_batch(batch, out, settings, cluster, workers, cache, json_output))
    if case is None or candidate is None:
        raise fail("give CASE and CANDIDATE, or --batch ROWS --out RESULTS", as_json=json_output)
    console = report_console()
    try:
        loaded = load_case(case)
        text = candidate.read_text(encoding="utf-8")
    except (OSError, ValidationError, ValueError) as exc:
        kind = type(exc).__name__
        raise fail(f"cannot read input: {exc}", as_json=json_output, kind=kind) from exc
    chosen = secrets.randbits(62) if seed is None and counterexample else seed
    if candidate.suffix == ".py":
        result = verify_candidate(loaded, text, seed=chosen, random_count=random, runs=runs)
    else:
        result = verify_patch(loaded, text, seed=chosen, random_count=random, runs=runs)
    whole = candidate.suffix == ".py"
    found = _counterexample(loaded, text, whole, result, chosen) if counterexample else None
    if json_output:
        document = result.model_dump(mode="json")
        if counterexample:
            document["counterexample"] = found
        typer.echo(json.dumps(document, indent=2))
    else:
        _show(result, console)
        if found is not None:
            console.print(Text(f"smallest failing contract input: {json.dumps(found)}"))
    raise typer.Exit(exit_code(result))


def _counterexample(
    case: Case, text: str, whole: bool, result: VerifyResult, seed: int | None
) -> Json:
    """The shrunk failing contract input of a wrong candidate (None when there is none)."""
    from speedproof.functions.counterexample import counterexample
    from speedproof.functions.patches import apply_patch

    if result.category != "semantic" or seed is None:
        return None
    try:
        source = text if whole else apply_patch(case.reference_source, text)
    except PatchError:
        return None
    return counterexample(case, source, seed)


def _verify_batch(
    rows: Path,
    out: Path,
    settings: BatchSettings,
    spec: str | None,
    workers: int,
    cache: Path | None,
    as_json: bool,
) -> int:
    from speedproof.cluster.preflight import function_needs
    from speedproof.cluster.spec import open_cluster
    from speedproof.corpus.cache import VerificationCache
    from speedproof.functions.batch import verify_batch

    try:
        book = VerificationCache(cache) if cache is not None else None
        with open_cluster(spec, workers=workers, needs=function_needs()) as running:
            report = verify_batch(rows, out, running, settings, cache=book)
    except SpeedproofError as exc:
        raise fail_on(exc, as_json=as_json) from exc
    summary = {
        "rows": report.rows,
        "already_done": report.already_done,
        "retried": report.retried,
        "cached": report.cached,
        "verified": report.verified,
        "statuses": dict(sorted(report.statuses.items())),
        "seconds": round(report.seconds, 1),
        "out": str(out),
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        report_console().print(
            f"{report.rows} rows: {report.verified} verified, {report.cached} from the cache, "
            f"{report.already_done} already in {out}, {report.retried} retried after an "
            f"infrastructure error; {json.dumps(summary['statuses'])} "
            f"in {report.seconds:.1f} s"
        )
    return EXIT_INFRASTRUCTURE if report.unjudged else EXIT_PASSED
