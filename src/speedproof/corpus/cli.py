"""`speedproof fn ...`: corpus generate/split/audit, collect, sft, train, eval.

Thin: parse options, call one library function, print. Errors print one line and exit 3; a
leak found by the audit exits 1 after printing every leak.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from speedproof.agents.providers.base import Provider
from speedproof.agents.providers.registry import make_provider
from speedproof.cluster.options import ClusterOption, WorkersOption
from speedproof.console import report_console
from speedproof.corpus.grading import CATEGORIES
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.ground.errors import SpeedproofError

EXIT_LEAK = 1
EXIT_ERROR = 3

console = report_console()
errors = Console(stderr=True)

CorpusDir = Annotated[
    Path,
    typer.Argument(help="Corpus folder (manifest.json and split files); corpus/v3 when omitted."),
]
ProviderSpec = Annotated[
    str, typer.Option("--provider", help="Who answers: replay:PATH (a recorded JSON-lines file).")
]


def _fail(message: str) -> typer.Exit:
    errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(EXIT_ERROR)


def provider_from_spec(spec: str) -> Provider:
    """Any provider the registry knows: openai:MODEL, anthropic:MODEL, replay:PATH, heuristic."""
    return make_provider(spec)


def _print_leaks(leaks: list[Any]) -> None:
    for leak in leaks:
        errors.print(leak.render(), highlight=False, markup=False)
    errors.print(f"[bold red]{len(leaks)} leak(s)[/]")


def _split_table(manifest: dict[str, Any]) -> Table:
    table = Table("split", "cases", "families", "templates", "sha256")
    for name, entry in manifest["splits"].items():
        table.add_row(
            name,
            str(entry["cases"]),
            str(len(entry["families"])),
            str(len(entry["templates"])),
            entry["sha256"][:16],
        )
    return table


def _progress_printer() -> Any:
    seen = [0]

    def show(pair: Any, verdict: dict[str, Any], cached: bool) -> None:
        seen[0] += 1
        how = "cached" if cached else f"{verdict.get('duration_s', 0):.1f} s"
        errors.print(
            f"[{seen[0]}] {pair.case.id} {verdict['status']} "
            f"reward {verdict['reward']:.2f} ({how})",
            highlight=False,
            markup=False,
        )

    return show


def corpus_generate(
    out: Annotated[Path, typer.Option("--out", help="Corpus folder to write.")],
    seed: Annotated[int, typer.Option(help="Generation seed.")] = 7,
    train: Annotated[int, typer.Option(help="Train cases.")] = 152,
    dev: Annotated[int, typer.Option(help="Dev cases.")] = 38,
    seen: Annotated[int, typer.Option(help="Frozen seen-family cases.")] = 30,
    heldout: Annotated[int, typer.Option(help="Frozen family-heldout cases.")] = 30,
    cache: Annotated[
        Path | None, typer.Option(help="Verification cache (default: OUT/verify-cache.jsonl).")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Pairs verified at once (local).")] = 2,
    random_count: Annotated[int, typer.Option(help="Random inputs per verification.")] = 64,
    split: Annotated[bool, typer.Option(help="Write split files and manifest.")] = True,
    cluster: ClusterOption = None,
) -> None:
    """Generate every pair, verify it (cached), stage the rows, then write splits and audit."""
    from speedproof.cluster.preflight import function_needs
    from speedproof.cluster.spec import open_cluster
    from speedproof.corpus.cache import VerificationCache
    from speedproof.corpus.generate import AdequacyGate, GenerationConfig, stage
    from speedproof.corpus.splits import write_staging

    config = GenerationConfig(
        seed=seed,
        sizes={"train": train, "dev": dev, "frozen_seen": seen, "frozen_heldout": heldout},
        workers=workers,
        random_count=random_count,
    )
    started = time.perf_counter()
    gate = AdequacyGate(lambda line: errors.print(line, highlight=False, markup=False))
    try:
        book = VerificationCache(cache or out / "verify-cache.jsonl")
        with open_cluster(cluster, workers=workers, needs=function_needs()) as running:
            rows, stats = stage(config, book, _progress_printer(), gate, running)
        write_staging(out, rows, config, len(gate.refused))
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    elapsed = time.perf_counter() - started
    console.print(
        f"staged {len(rows)} verified pairs in {elapsed:.1f} s "
        f"({stats.verified} verified now, {stats.cached} from the cache; "
        f"{len(gate.refused)} drafts below the adequacy bar redrawn)"
    )
    if split:
        corpus_split(out)


def corpus_split(folder: CorpusDir) -> None:
    """Write split files and manifest.json from the staged rows, then audit them."""
    from speedproof.corpus.audit import audit_folder
    from speedproof.corpus.splits import write_splits

    try:
        manifest = write_splits(folder)
        leaks = audit_folder(folder)
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    console.print(_split_table(manifest))
    if leaks:
        _print_leaks(leaks)
        raise typer.Exit(EXIT_LEAK)


def corpus_audit(
    folder: CorpusDir = DEFAULT_CORPUS,
    adequacy: Annotated[
        bool,
        typer.Option(help="Also hold every case to the input-adequacy bar (minutes per corpus)."),
    ] = True,
    workers: Annotated[int, typer.Option(min=1, help="Cases checked at once (local).")] = 2,
    cluster: ClusterOption = None,
) -> None:
    """Check checksums, leaks and input adequacy; exits 1 and prints every finding."""
    from speedproof.corpus.audit import audit_folder
    from speedproof.corpus.splits import superseded_by

    try:
        leaks = audit_folder(folder)
        replaced = superseded_by(folder)
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    if replaced:
        errors.print(f"[yellow]{folder} is superseded by {replaced}[/]", highlight=False)
    if leaks:
        _print_leaks(leaks)
        raise typer.Exit(EXIT_LEAK)
    console.print("[green]no leaks[/]: ids, templates, AST hashes, skeletons, families, checksums")
    if adequacy and not _adequacy_audit(folder, workers, cluster):
        raise typer.Exit(EXIT_LEAK)


def _adequacy_audit(folder: Path, workers: int, spec: str | None) -> bool:
    from speedproof.cluster.preflight import function_needs
    from speedproof.cluster.spec import open_cluster
    from speedproof.corpus.adequacy_audit import MIN_KILL_RATE, audit_cases, by_family
    from speedproof.corpus.splits import load_all

    cases = [case for split in load_all(folder).values() for case in split]
    try:
        with open_cluster(spec, workers=workers, needs=function_needs()) as running:
            results = audit_cases(cases, cluster=running)
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    families = by_family(results)
    table = Table("family", "cases", "failing", "kill rate", "lowest", "traps passed")
    for name, entry in families.items():
        table.add_row(
            name,
            str(entry.cases),
            str(entry.failing),
            f"{entry.kill_rate:.1%}",
            f"{entry.lowest_kill_rate:.1%}",
            str(entry.traps_passed),
        )
    console.print(table)
    failing = [s for entry in families.values() for s in entry.shortfalls]
    for line in failing:
        errors.print(line, highlight=False, markup=False)
    below = [e.family for e in families.values() if e.kill_rate < MIN_KILL_RATE]
    if failing or below:
        errors.print(f"[bold red]{len(failing)} case finding(s) below the adequacy bar[/]")
        return False
    console.print(f"[green]adequate[/]: {len(cases)} cases, every family kills ≥ 95 % of mutants")
    return True


def collect_command(
    provider: ProviderSpec,
    out: Annotated[Path, typer.Option("--out", help="Append-only turns file (JSON lines).")],
    corpus: CorpusDir = DEFAULT_CORPUS,
    attempts: Annotated[int, typer.Option(min=1, help="Attempts per case.")] = 3,
    limit: Annotated[int | None, typer.Option(help="At most this many new cases.")] = None,
    role: Annotated[str, typer.Option(help="Provider role.")] = "teacher",
    cluster: ClusterOption = None,
    workers: WorkersOption = 2,
) -> None:
    """Run a teacher on train cases; keep only passing turns; resumable."""
    from speedproof.cluster.preflight import function_needs
    from speedproof.cluster.spec import open_cluster
    from speedproof.corpus.collect import CollectConfig, collect
    from speedproof.corpus.splits import load_split

    try:
        cases = load_split(corpus, "train")
        with open_cluster(cluster, workers=workers, needs=function_needs()) as running:
            stats = collect(
                cases,
                provider_from_spec(provider),
                out,
                CollectConfig(attempts=attempts, role=role, limit=limit),
                provider_name=provider,
                train_ids={c.id for c in cases},
                cluster=running,
            )
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    console.print(
        f"passed {stats.passed}, exhausted {stats.exhausted}, skipped {stats.skipped} "
        f"(already done), {stats.attempts} attempts: {json.dumps(stats.categories)}"
    )


def sft_command(
    turns: Annotated[Path, typer.Option("--turns", help="Collected turns file.")],
    out: Annotated[Path, typer.Option("--out", help="SFT rows file to write.")],
    corpus: CorpusDir = DEFAULT_CORPUS,
    focus: Annotated[
        list[str] | None, typer.Option("--focus", help="family=N extra copies of its rows.")
    ] = None,
    replay: Annotated[Path | None, typer.Option(help="Earlier SFT file to replay.")] = None,
    replay_ratio: Annotated[float, typer.Option(help="Share of replayed rows.")] = 0.0,
    seed: Annotated[int, typer.Option(help="Shuffle and replay seed.")] = 7,
) -> None:
    """Build chat SFT rows; refuses non-train case ids; audits the result for leaks."""
    from speedproof.corpus.collect import read_turns
    from speedproof.corpus.errors import LeakageError
    from speedproof.corpus.sft import SftConfig, build_sft, parse_focus, read_sft, write_sft
    from speedproof.corpus.splits import load_all

    try:
        config = SftConfig(focus=parse_focus(focus or []), replay_ratio=replay_ratio, seed=seed)
        earlier = read_sft(replay) if replay is not None else []
        rows = build_sft(read_turns(turns), load_all(corpus), config, earlier)
        summary = write_sft(out, rows)
    except LeakageError as exc:
        errors.print(str(exc), highlight=False, markup=False)
        raise typer.Exit(EXIT_LEAK) from exc
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    console.print_json(json.dumps(summary))


def train_command(
    sft: Annotated[Path, typer.Option("--sft", help="SFT rows file.")],
    base_model: Annotated[str, typer.Option("--base-model", help="Local model folder.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder (adapter/, run.json).")],
    rank: int = 16,
    alpha: int = 32,
    dropout: float = 0.05,
    lr: float = 5e-5,
    batch: int = 4,
    grad_accum: int = 4,
    epochs: float = 1.0,
    seed: int = 7,
    max_length: int = 2048,
    val_fraction: float = 0.05,
) -> None:
    r"""LoRA SFT (needs the \[train] extra); writes the adapter and a run manifest."""
    from speedproof.corpus.train import TrainConfig, train

    config = TrainConfig(
        rank=rank,
        alpha=alpha,
        dropout=dropout,
        learning_rate=lr,
        batch_size=batch,
        grad_accum=grad_accum,
        epochs=epochs,
        seed=seed,
        max_length=max_length,
        val_fraction=val_fraction,
    )
    try:
        manifest = train(sft, base_model, out, config)
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    console.print(
        f"adapter written to {out / 'adapter'}: {manifest['steps']} steps, "
        f"train loss {manifest['train_loss']:.4f}"
    )


def _family_table(report: dict[str, Any]) -> Table:
    shown = [c for c in CATEGORIES if report["total"]["categories"][c]]
    table = Table("family", "cases", "pass rate", *shown, title=f"{report['split']}")
    rows = [*report["families"].items(), ("total", report["total"])]
    for name, tally in rows:
        rate = "n/a" if tally["pass_rate"] is None else f"{tally['pass_rate']:.0%}"
        counts = [str(tally["categories"][c]) for c in shown]
        table.add_row(name, str(tally["cases"]), rate, *counts)
    return table


def eval_command(
    provider: ProviderSpec,
    out: Annotated[Path, typer.Option("--out", help="Report folder.")],
    corpus: CorpusDir = DEFAULT_CORPUS,
    split: Annotated[str, typer.Option(help="Split to evaluate.")] = "dev",
    attempts: Annotated[int, typer.Option(min=1, help="Attempts per case.")] = 1,
    role: Annotated[str, typer.Option(help="Provider role.")] = "student",
    seed: Annotated[
        int | None,
        typer.Option(help="Base seed of the hidden inputs (fresh and recorded when omitted)."),
    ] = None,
    cluster: ClusterOption = None,
    workers: WorkersOption = 2,
) -> None:
    """Evaluate a provider on a split: categories, per-family table, report, chart."""
    from speedproof.cluster.preflight import function_needs
    from speedproof.cluster.spec import open_cluster
    from speedproof.corpus.evaluate import EvalConfig, evaluate
    from speedproof.corpus.splits import load_split, split_path

    try:
        cases = load_split(corpus, split)
        with open_cluster(cluster, workers=workers, needs=function_needs()) as running:
            report = evaluate(
                cases,
                provider_from_spec(provider),
                EvalConfig(split=split, attempts=attempts, role=role, seed=seed),
                out,
                split_file=split_path(corpus, split),
                provider_name=provider,
                cluster=running,
            )
    except SpeedproofError as exc:
        raise _fail(str(exc)) from exc
    console.print(_family_table(report))
    console.print(f"report: {out / 'report.json'}  chart: {out / 'chart.html'}")
    forbidden = _forbidden_uses(corpus, split)
    if forbidden:
        console.print(f"[yellow]{split} is for evaluation only:[/] {'; '.join(forbidden)}")


def _forbidden_uses(corpus: Path, split: str) -> list[str]:
    from speedproof.corpus.splits import read_manifest

    try:
        entry = read_manifest(corpus)["splits"].get(split, {})
    except SpeedproofError:
        return []
    return [use for use in entry.get("forbidden_uses", []) if use.startswith("never")]


def register(fn_app: typer.Typer) -> None:
    """Add `corpus {generate,split,audit}`, `collect`, `sft`, `train` and `eval` to `fn_app`."""
    corpus_app = typer.Typer(help="Generate, split and audit the corpus.", no_args_is_help=True)
    corpus_app.command("generate")(corpus_generate)
    corpus_app.command("split")(corpus_split)
    corpus_app.command("audit")(corpus_audit)
    fn_app.add_typer(corpus_app, name="corpus")
    fn_app.command("collect")(collect_command)
    fn_app.command("sft")(sft_command)
    fn_app.command("train")(train_command)
    fn_app.command("eval")(eval_command)
