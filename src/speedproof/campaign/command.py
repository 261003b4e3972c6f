"""`speedproof optimize`: run a campaign on a target, or resume one, and say why it stopped.

Exit status: 0 when the campaign stopped on an exit condition (target reached, a budget spent,
nothing left, …), 4 when it stopped on an escalation that needs a person, 3 on an error (a bad
manifest, a provider that fails its preflight, a broken baseline), 130 on Ctrl-C and 143 on
SIGTERM (both leave the campaign resumable with `--resume`).
"""

from __future__ import annotations

import signal
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from speedproof.campaign.discovery_log import summary as discovery_summary
from speedproof.campaign.exits import ERROR, Exit, cumulative
from speedproof.campaign.loop import FINAL_PATCH, describe
from speedproof.campaign.options import parse_duration
from speedproof.campaign.session import Opened, Request, open_campaign
from speedproof.campaign.state import CampaignState
from speedproof.campaign.waves import campaign_for
from speedproof.cli_options import HoldoutDirOption
from speedproof.console import report_console
from speedproof.ground.errors import SpeedproofError
from speedproof.judge.measure.runner import Sample
from speedproof.judge.view import LiveProgress
from speedproof.judge.worktree.trees import Terminated
from speedproof.manifest import MANIFEST_NAME

EXIT_DONE = 0
EXIT_ERROR = 3
EXIT_ESCALATION = 4
EXIT_INTERRUPTED = 130


class SeatChoice(StrEnum):
    """Who answers a seat: the model role, or the advisor (docs/adr/0024)."""

    model = "model"
    advisor = "advisor"


class TerminalView:
    """The campaign on the terminal: a live status line and one line per thing that happened,
    both on the progress console (stderr), so the status line is never printed through; the
    summary at the end goes to stdout."""

    def __init__(self, progress: LiveProgress, console: Console) -> None:
        self.progress = progress
        self.console = console

    def stage(self, name: str, message: str) -> None:
        self.progress.stage(name, message)

    def sample(self, sample: Sample) -> None:
        self.progress.sample(sample)

    def say(self, text: str) -> None:
        self.console.print(text, highlight=False, markup=False)


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


def optimize_command(
    manifest: Annotated[
        Path | None,
        typer.Option("--manifest", "-m", help=f"The target's manifest (default {MANIFEST_NAME})."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Proposer: openai:MODEL, anthropic:MODEL, replay:PATH or heuristic."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="An OpenAI- or Anthropic-compatible server.")
    ] = None,
    max_candidates: Annotated[
        int | None, typer.Option(min=1, help="Candidates to propose at most (default 20).")
    ] = None,
    max_duration: Annotated[
        str | None, typer.Option(help="Time to spend at most, e.g. 30m, 2h (default 4h).")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Model tokens at most.")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Model cost at most, in USD.")] = None,
    target_pct: Annotated[
        float | None, typer.Option(help="Stop once the accepted chain improves this much (%).")
    ] = None,
    max_failures: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many non-accepts in a row (5).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Campaign folder (default <target>/.speedproof/campaigns/<id>)."),
    ] = None,
    no_sandbox: Annotated[
        bool, typer.Option("--no-sandbox", help="Run without bubblewrap. Recorded.")
    ] = False,
    no_stability_check: Annotated[
        bool,
        typer.Option(
            "--no-stability-check",
            help="Skip the A/A check of the base against itself (when calibrated already).",
        ),
    ] = False,
    resume: Annotated[
        Path | None, typer.Option(help="Continue the campaign in this folder.")
    ] = None,
    analyst: Annotated[
        SeatChoice | None,
        typer.Option(help="Who names likely causes: the model role or the advisor (model)."),
    ] = None,
    reviewer: Annotated[
        SeatChoice | None,
        typer.Option(help="Who argues against a change: the model role or the advisor (model)."),
    ] = None,
    explorer: Annotated[
        bool | None,
        typer.Option(
            "--explorer/--no-explorer",
            help="Ask once for extra workloads that widen profiling; never measured (off).",
        ),
    ] = None,
    holdout_dir: HoldoutDirOption = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="Judge candidates on a cluster, one per node with a measurement slot at a time: "
            "local (a worker process here), ray (the cluster at RAY_ADDRESS, or the one `ray "
            "start --head` left here) or ray://HOST:PORT. Default: here, one at a time.",
        ),
    ] = None,
) -> None:
    """Find proven speedups: propose, judge and keep what is accepted, until an exit condition."""
    errors = Console(stderr=True)
    try:
        request = Request(
            manifest=manifest if manifest or resume else Path(MANIFEST_NAME),
            model=model,
            base_url=base_url,
            limits={
                "max_candidates": max_candidates,
                "max_duration_s": None if max_duration is None else parse_duration(max_duration),
                "max_tokens": max_tokens,
                "max_cost_usd": max_cost,
                "target_pct": target_pct,
                "max_failures": max_failures,
            },
            out=out,
            allow_unsandboxed=no_sandbox,
            stability_check=not no_stability_check,
            resume=resume,
            analyst=None if analyst is None else analyst.value,
            reviewer=None if reviewer is None else reviewer.value,
            explorer=explorer,
            holdout_dir=holdout_dir,
            cluster=cluster,
        )
        code = _optimize(request, errors)
    except SpeedproofError as exc:
        # Escaped: messages name pip extras (`speedproof[llm]`) and manifest tables, which rich
        # would otherwise swallow as markup. Not wrapped: a message is one line to copy from.
        errors.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_ERROR) from exc
    except KeyboardInterrupt as exc:
        errors.print("interrupted", highlight=False)
        raise typer.Exit(EXIT_INTERRUPTED) from exc
    raise typer.Exit(code)


def _optimize(request: Request, errors: Console) -> int:
    out = report_console()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with open_campaign(request) as opened:
            _announce(opened, out, errors)
            with LiveProgress(errors) as progress:
                campaign = campaign_for(opened.setting, TerminalView(progress, errors))
                try:
                    found = campaign.run()
                except KeyboardInterrupt:
                    _farewell(opened, None, campaign.state(), out)
                    return EXIT_INTERRUPTED
            _farewell(opened, found, campaign.state(), out)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if found.condition == ERROR:
        return EXIT_ERROR
    return EXIT_ESCALATION if found.escalation else EXIT_DONE


def _announce(opened: Opened, out: Console, errors: Console) -> None:
    s = opened.setting
    verb = "resuming" if opened.resumed else "campaign"
    out.print(f"{verb} {s.campaign} on {s.loaded.manifest.target.name}", highlight=False)
    out.print(f"folder: {s.folder}", highlight=False)
    out.print(f"proposer: {s.provider_name} ({opened.preflight.detail})", highlight=False)
    options = opened.options
    advisor = "" if s.advice is None else f" (advisor {s.advice.model})"
    out.print(
        f"analyst: {options.analyst}, reviewer: {options.reviewer}{advisor}; explorer: "
        + ("on" if options.explorer else "off"),
        highlight=False,
    )
    if s.cluster is not None:
        nodes = [n for n in s.cluster.nodes() if n.slots > 0]
        out.print(
            f"cluster: {options.cluster}, {len(nodes)} node(s) with a measurement slot, one "
            "candidate each at a time",
            highlight=False,
        )
    if s.sandbox.name == "none":
        errors.print("[bold yellow]warning:[/] running UNSANDBOXED (--no-sandbox); recorded.")
    for path in opened.removed_worktrees:
        out.print(f"removed a stale worktree: {path}", highlight=False)


def _farewell(opened: Opened, found: Exit | None, state: CampaignState, out: Console) -> None:
    s = opened.setting
    _candidates(found, state, out)
    for line in discovery_summary(s.ledger, state):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    for workload, pct in sorted(cumulative(state).items()):
        out.print(f"accepted chain on {workload}: {pct:+.2f}% better", highlight=False)
    if found is None:
        out.print("interrupted; continue with --resume", highlight=False)
    else:
        out.print(describe(found), highlight=False)
    out.print(f"accepted: {len(state.chain)}; cumulative diff: {s.folder / FINAL_PATCH}")
    out.print(f"folder: {s.folder}", highlight=False)
    out.print(f"report: speedproof report {s.folder}", highlight=False)


def _candidates(found: Exit | None, state: CampaignState, out: Console) -> None:
    """The table of judged candidates; when there is none, one line that says so and why."""
    settled = state.settled()
    if not settled:
        why = "interrupted before a verdict" if found is None else found.message
        out.print(f"no candidate was judged: {why}", highlight=False, markup=False, soft_wrap=True)
        return
    table = Table("#", "candidate", "function", "rule", "verdict", "reason", title="candidates")
    for number, attempt in enumerate(settled, start=1):
        reason = attempt.reasons[0] if attempt.reasons else (attempt.error or "")
        table.add_row(
            str(number),
            str(attempt.candidate_id),
            attempt.function,
            attempt.rule or "",
            attempt.history_verdict,
            reason[:160],
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("optimize")(optimize_command)
