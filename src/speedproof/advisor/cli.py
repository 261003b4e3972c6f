"""`speedproof advisor baseline` and `speedproof advisor drift OLD NEW`.

baseline: ask every question of the shipped reference set and write the answers, their means
and standard deviations, the model id and the digests to a baseline file. Without `--model` the
offline static advisor is measured (that is how the shipped baseline is made).

drift: compare two builds over the reference set. OLD and NEW are each a baseline file or a
model to measure now (`openai:<id>` at `--base-url`, or `static`). Exit status: 0 when no
decision flips, 1 when any flagged-cause set, top-ranked cause or flagged-hazard set flips,
3 on an error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from speedproof.advisor.answers import Answerer
from speedproof.advisor.baseline import Baseline, load_baseline, measure_baseline, save_baseline
from speedproof.advisor.client import EndpointAdvisor
from speedproof.advisor.drift import DriftReport, compare
from speedproof.advisor.gates import Gate, Gates
from speedproof.advisor.reference import ReferenceSet, load_reference
from speedproof.advisor.static import StaticAdvisor
from speedproof.cli_errors import fail_on
from speedproof.console import report_console
from speedproof.ground.errors import SpeedproofError
from speedproof.manifest import Advisor as AdvisorSettings
from speedproof.manifest_loading import load_manifest

EXIT_FLIPS = 1
EXIT_ERROR = 3
SHOWN_FLIPS = 20

advisor_app = typer.Typer(
    help="The advisor: calibrated yes/no cause questions. Measure baselines, watch for drift.",
    no_args_is_help=True,
)
console = report_console()
errors = Console(stderr=True)


def register(app: typer.Typer) -> None:
    app.add_typer(advisor_app, name="advisor")


def _fail(message: str) -> typer.Exit:
    # Escaped: a message may name a pip extra (`speedproof[llm]`), which rich reads as markup.
    # Not wrapped: a message is one line to copy from.
    errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def _answerer(model: str | None, base_url: str | None) -> Answerer:
    if model is None or model == "static":
        return StaticAdvisor()
    return EndpointAdvisor(model, base_url=base_url)


def _measure(answerer: Answerer, reference: ReferenceSet, note: str) -> Baseline:
    with errors.status(f"measuring {answerer.model_id}") as status:

        def progress(done: int, total: int, what: str) -> None:
            status.update(f"measuring {answerer.model_id}: {done}/{total} {what}")

        return measure_baseline(answerer, reference, note=note, progress=progress)


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", model).strip("-")


@advisor_app.command("baseline")
def baseline_command(
    model: Annotated[
        str | None,
        typer.Option(help="openai:<exact model id>; default: the manifest's, else static."),
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The endpoint.")] = None,
    manifest: Annotated[
        Path | None, typer.Option("--manifest", "-m", help="Read [advisor] from this manifest.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Baseline file (default: next to here).")
    ] = None,
    note: Annotated[str, typer.Option(help="A note kept in the baseline.")] = "",
) -> None:
    """Measure the reference set and write a baseline for one exact build."""
    try:
        if manifest is not None and model is None:
            settings = load_manifest(manifest).manifest.advisor
            model, base_url = settings.model, base_url or settings.base_url
        answerer = _answerer(model, base_url)
        measured = _measure(answerer, load_reference(), note)
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    target = out or Path(f"advisor-baseline-{_slug(measured.model)}.json")
    save_baseline(measured, target)
    table = Table("question", "mean", "sd", "n")
    for question, stats in measured.stats.items():
        table.add_row(question, f"{stats.mean:.3f}", f"{stats.sd:.3f}", str(stats.n))
    console.print(table)
    console.print(
        f"wrote {target}: {measured.model}, questions {measured.questions_digest[:12]}, "
        f"reference {measured.reference_digest[:12]}",
        highlight=False,
    )


def _side(spec: str, base_url: str | None, reference: ReferenceSet) -> Baseline:
    path = Path(spec)
    if path.is_file():
        return load_baseline(path)
    if spec == "static" or spec.startswith("openai:"):
        return _measure(_answerer(spec, base_url), reference, f"measured for drift: {spec}")
    raise SpeedproofError(
        f"{spec!r} is neither a baseline file nor a model (openai:<id>, or static)"
    )


@advisor_app.command("drift")
def drift_command(
    old: Annotated[str, typer.Argument(help="A baseline file, or a model to measure now.")],
    new: Annotated[str, typer.Argument(help="A baseline file, or a model to measure now.")],
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="The endpoint for a model measured now.")
    ] = None,
    cause_sd: Annotated[float, typer.Option(help="Cause gate: sd above the usual.")] = 0.5,
    cause_p: Annotated[float, typer.Option(help="Cause gate: probability floor.")] = 0.5,
    hazard_sd: Annotated[float, typer.Option(help="Hazard gate: sd above the usual.")] = 2.0,
    hazard_p: Annotated[float, typer.Option(help="Hazard gate: probability floor.")] = 0.5,
    save: Annotated[
        Path | None, typer.Option(help="Write NEW's baseline here when it was measured now.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The report as one JSON object.")] = False,
) -> None:
    """Re-measure and compare two builds: mean shifts, paired |delta|, decisions that flip."""
    gates = Gates(Gate(cause_sd, cause_p), Gate(hazard_sd, hazard_p))
    try:
        AdvisorSettings(cause_sd=cause_sd, cause_p=cause_p, hazard_sd=hazard_sd, hazard_p=hazard_p)
        reference = load_reference()
        before = _side(old, base_url, reference)
        after = _side(new, base_url, reference)
        report = compare(before, after, reference=reference, gates=gates)
    except (SpeedproofError, ValueError) as exc:
        raise fail_on(exc, as_json=as_json) from exc
    if save is not None:
        save_baseline(after, save)
    if as_json:
        typer.echo(json.dumps(report.to_record(), indent=2))
    else:
        _print(report)
    raise typer.Exit(EXIT_FLIPS if report.decisions_flip else 0)


def _print(report: DriftReport) -> None:
    table = Table("question", "kind", "old mean", "new mean", "shift", "paired |Δ|", "n")
    for q in report.questions:
        table.add_row(
            q.question,
            q.kind,
            f"{q.old_mean:.3f}",
            f"{q.new_mean:.3f}",
            f"{q.shift:+.3f}",
            f"{q.paired_mean_abs:.3f}",
            str(q.n),
        )
    console.print(f"drift: {report.old_model} -> {report.new_model}", highlight=False)
    console.print(table)
    lines = [
        f"largest mean shift: {report.max_abs_shift:.3f}",
        f"paired mean |Δ| over {report.pairs} answers: {report.paired_mean_abs:.3f}",
        f"flagged-cause sets flipped: {len(report.flagged_set_flips)} of {report.cause_items}",
        f"top-ranked cause flipped: {len(report.top_cause_flips)} of {report.cause_items}",
        f"flagged-hazard sets flipped: {len(report.hazard_set_flips)} of {report.hazard_items}",
    ]
    for line in lines:
        console.print(line, highlight=False)
    flips = [*report.flagged_set_flips, *report.hazard_set_flips][:SHOWN_FLIPS]
    for flip in flips:
        old = ", ".join(flip.old) or "nothing"
        new = ", ".join(flip.new) or "nothing"
        console.print(f"  {flip.item}: {old} -> {new}", highlight=False, markup=False)
