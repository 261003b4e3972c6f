"""`speedproof judge`: load the manifest, make the sandbox, open the ledger, judge one patch."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from speedproof.console import report_console
from speedproof.gitexclude import exclude_from_git
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.outcome import Outcome
from speedproof.judge.view import LiveProgress, render_outcome
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest

LEDGER_FOLDER = ".speedproof"


def read_patch(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise InfrastructureError(f"cannot read the patch {path}: {exc.strerror}") from exc


def judge_patch(
    patch: Path,
    manifest: Path,
    *,
    repo: Path | None = None,
    base: str = "HEAD",
    pairs: int | None = None,
    ledger_dir: Path | None = None,
    allow_unsandboxed: bool = False,
    quiet: bool = False,
    holdout_dir: Path | None = None,
) -> Outcome:
    loaded = load_manifest(manifest)
    text = read_patch(patch)
    sandbox = make_sandbox(allow_unsandboxed=allow_unsandboxed)
    console = Console(stderr=True, quiet=quiet)
    if sandbox.name == "none":
        console.print("[bold yellow]warning:[/] running UNSANDBOXED (--no-sandbox); recorded.")
    folder = ledger_dir or loaded.root / LEDGER_FOLDER
    options = JudgeOptions(repo=repo, base=base, pairs=pairs, holdout_dir=holdout_dir)
    with Ledger.in_folder(folder) as ledger, LiveProgress(console) as progress:
        # Ours, not the user's: a ledger inside their repository stays out of `git status`.
        exclude_from_git(folder)
        judge = Judge(
            loaded,
            sandbox=sandbox,
            ledger=ledger,
            options=options,
            progress=progress.stage,
            on_sample=progress.sample,
        )
        outcome = judge.judge(text)
    if not quiet:
        out = report_console()
        render_outcome(outcome, out)
        where = folder.resolve()
        out.print(
            f"recorded as candidate #{outcome.ledger_id} in the ledger {where} "
            f"(speedproof ledger show {outcome.ledger_id} --ledger {where})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return outcome
