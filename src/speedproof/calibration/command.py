"""The `speedproof calibrate` command: run the trials, print the table, keep it in the ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from speedproof.calibration.sides import WARN_P
from speedproof.calibration.trials import CalibrateOptions, Calibration, CalibrationReport
from speedproof.cli_errors import fail_on
from speedproof.console import report_console, stage_line
from speedproof.ground.errors import SpeedproofError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.patches import LEDGER_FOLDER, read_patch
from speedproof.ledger import Ledger
from speedproof.manifest import MANIFEST_NAME
from speedproof.manifest_loading import load_manifest

EXIT_ERROR = 3


def render_report(report: CalibrationReport, console: Console) -> None:
    machine = report.machine
    title = (
        f"calibration of {report.target} at {report.base_rev[:12]} — "
        f"{machine.get('cpu_model', '?')}, governor {machine.get('governor', '?')}, "
        f"load {machine.get('load_1m', '?')}, timed on {machine.get('timed_cpus', '?')}"
    )
    table = Table(
        "trial",
        "n",
        "accepted",
        "rejected",
        "inconclusive",
        "false accepts",
        "false rejects",
        "median pairs",
        "mean pairs",
        title=title,
    )
    for s in report.summary():
        table.add_row(
            s.kind,
            str(s.trials),
            str(s.accepted),
            str(s.rejected),
            str(s.inconclusive),
            "-" if s.false_accepts is None else str(s.false_accepts),
            "-" if s.false_rejects is None else str(s.false_rejects),
            f"{s.median_pairs:g}",
            f"{s.mean_pairs:.1f}",
        )
    console.print(table)
    _render_noise(report, console)
    _render_sides(report, console)
    win = report.win
    if win["kind"] == "patch":
        console.print("win trials: the candidate is the --win patch against the base revision.")
    else:
        sizing = win["sizing"]
        (iterations,) = sizing["iterations"].values()
        console.print(
            f"win trials: a {win['win_pct']:g}% win on {sizing['workload']}, made by a busy loop "
            f"of {iterations:,} iterations injected into the baseline at start."
        )
    schedule = report.schedule
    budget = schedule.get("budget_s")
    within = f", within {budget:g} s of timed runs a workload" if budget else ""
    console.print(
        f"schedule: rounds of {schedule['round_pairs']} pairs up to {schedule['max_pairs']}"
        f"{within}, alpha {schedule['alpha']:g}; sandbox {report.sandbox}."
    )


def _render_noise(report: CalibrationReport, console: Console) -> None:
    """The noise per pair from the no-change trials, and the wins the schedule resolves."""
    noise = report.noise()
    if not noise:
        return
    pairs = report.schedule["max_pairs"]
    table = Table(
        "workload",
        "readings",
        "sd per pair",
        "winsorized sd",
        f"win resolved 9 in 10 at {pairs} pairs",
        "pairs for a win of twice the floor",
        title="noise of the primary metric in the a/a and null trials (an estimate, ADR 0029)",
    )
    for n in noise:
        needed = "over 1000" if n.pairs_for_win is None else str(n.pairs_for_win)
        table.add_row(
            n.workload,
            str(n.readings),
            f"{n.sd_pct:.1f}%",
            f"{n.winsorized_sd_pct:.1f}%",
            f"{n.resolvable_win_pct:.1f}%",
            f"{needed} ({n.win_pct:g}%)",
        )
    console.print(table)
    # markup off: "[policy]" is the manifest's table, not a style
    console.print(
        "Wins below the resolved size mostly end inconclusive here; a larger [policy] max_pairs, "
        "[policy] timed_cpus or the instruction lane resolve smaller ones.",
        markup=False,
    )


def _render_sides(report: CalibrationReport, console: Console) -> None:
    """How the no-change trials' test scores lean and scatter, and a warning where they should
    not (`speedproof.calibration.sides`)."""
    checks = report.sides()
    if not checks:
        return
    table = Table(
        "trial",
        "workload",
        "trials",
        "mean score",
        "lean p",
        "mean squared score",
        "spread p",
        title="do the no-change trials lean one way? (scores are N(0, 1) where the test is right)",
    )
    for c in checks:
        table.add_row(
            c.kind,
            c.workload,
            str(c.trials),
            f"{c.mean_z:+.2f}",
            f"{c.lean_p:.3f}",
            f"{c.spread:.2f}",
            f"{c.spread_p:.3f}",
        )
    console.print(table)
    for c in checks:
        found = []
        if c.lean_p < WARN_P:
            found.append(f"lean one way (p = {c.lean_p:.3g}): the two sides differ beyond noise")
        if c.spread_p < WARN_P:
            found.append(
                f"scatter wider than their tests expect (mean squared score {c.spread:.2f} "
                f"against 1, p = {c.spread_p:.3g})"
            )
        if found:
            console.print(
                f"warning: the {c.kind} trials on {c.workload} {' and '.join(found)}; the error "
                "rates above understate what verdicts risk here.",
                markup=False,
            )


def calibrate_command(
    manifest: Annotated[Path, typer.Option("--manifest", "-m", help="The target's manifest.")] = (
        Path(MANIFEST_NAME)
    ),
    trials: Annotated[int, typer.Option(min=1, help="Trials of each kind.")] = 10,
    win: Annotated[
        float, typer.Option(help="Size of the injected known win, in % (0 < win < 100).")
    ] = 10.0,
    win_patch: Annotated[
        Path | None, typer.Option("--win-patch", help="Use this patch as the known win instead.")
    ] = None,
    pairs: Annotated[
        int | None, typer.Option(min=4, help="A fixed schedule of this many pairs instead.")
    ] = None,
    repo: Annotated[Path | None, typer.Option(help="The git repository.")] = None,
    base: Annotated[str, typer.Option(help="Base revision.")] = "HEAD",
    ledger: Annotated[Path | None, typer.Option("--ledger", help="Ledger folder.")] = None,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="Run without bubblewrap. Recorded.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """How far to trust verdicts here: false accepts, false rejects and power, measured."""
    try:
        loaded = load_manifest(manifest)
        options = CalibrateOptions(
            trials=trials,
            win_pct=win,
            win_patch=None if win_patch is None else read_patch(win_patch),
            repo=repo,
            base=base,
            pairs=pairs,
        )
        sandbox = make_sandbox(allow_unsandboxed=no_sandbox)
        progress = Console(stderr=True, quiet=as_json)
        report = Calibration(
            loaded,
            sandbox=sandbox,
            options=options,
            progress=lambda stage, message: progress.print(stage_line(stage, message)),
        ).run()
        with Ledger.in_folder(ledger or loaded.root / LEDGER_FOLDER) as book:
            book.add_event(None, "calibration", report.to_json())
    except (SpeedproofError, ValueError) as exc:
        raise fail_on(exc, as_json=as_json) from exc
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        render_report(report, report_console(least_width=160))


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
