"""`make demo`: a real campaign on a bundled example with the offline heuristic proposer.

The Go example `logstat` is laid out as a fresh git repository under `demo/` (ignored by git),
and `speedproof optimize` runs on it exactly as a user would run it: the heuristic provider
profiles nothing itself, it reads what discovery found and proposes rewrites; each candidate
goes through the guard, the build, the tests, the behaviour gate and the sequential timed lane;
accepted ones become the parent of the next. Then `speedproof report` writes the HTML, Markdown
and JSON reports.

The demo passes when the campaign ended on an exit condition (not an error or an escalation)
with at least one accepted candidate whose accepted reading is an improvement of 10 % or more,
and the report exists. `--judge-patches` instead judges every bundled example patch against the
verdict its kind demands (the judge on its own, without a proposer).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from speedproof.examples import Example, expectation, find_examples, materialise, meets
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.patches import read_patch
from speedproof.judge.view import LiveProgress
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest

DEMO_FOLDER = Path("demo")
DEMO_EXAMPLE = "logstat"
# Enough candidates for the heuristic's rules on logstat's hot functions; each takes about a
# minute on 2 cores, so the whole demo stays well under ten.
MAX_CANDIDATES = 5
WIN_PCT = 10.0


def _campaign(console: Console) -> int:
    example = next(e for e in find_examples() if e.name == DEMO_EXAMPLE)
    if DEMO_FOLDER.exists():
        shutil.rmtree(DEMO_FOLDER)
    DEMO_FOLDER.mkdir()
    repo = materialise(example, DEMO_FOLDER.resolve())
    folder = DEMO_FOLDER.resolve() / "campaign"
    command = [
        sys.executable,
        "-m",
        "speedproof",
        "optimize",
        "--manifest",
        str(repo / "speedproof.toml"),
        "--model",
        "heuristic",
        "--max-candidates",
        str(MAX_CANDIDATES),
        "--out",
        str(folder),
    ]
    console.rule(f"speedproof optimize on {DEMO_EXAMPLE} with the heuristic proposer")
    console.print(" ".join(command[2:]), highlight=False)
    start = time.perf_counter()
    ran = subprocess.run(command, check=False)
    console.rule("speedproof report")
    report = subprocess.run(
        [sys.executable, "-m", "speedproof", "report", str(folder)], check=False
    )
    minutes = (time.perf_counter() - start) / 60
    best = _best_accept(folder)
    console.print(f"campaign exit status {ran.returncode}; {minutes:.1f} min", highlight=False)
    if best is None:
        console.print("[red]no accepted candidate[/]")
        return 1
    workload, pct = best
    console.print(f"best accepted: {pct:.2f}% better on {workload}", highlight=False)
    console.print(f"report: {folder / 'report.html'}", highlight=False)
    ok = ran.returncode == 0 and report.returncode == 0 and pct >= WIN_PCT
    console.print("demo passed" if ok else f"[red]demo failed (need a {WIN_PCT:g}% accept)[/]")
    return 0 if ok else 1


def _best_accept(folder: Path) -> tuple[str, float] | None:
    """The largest improvement an accepted candidate's verdict rests on, from the ledger."""
    with Ledger.in_folder(folder) as ledger:
        rows = ledger.query(
            "SELECT c.id, v.rests_on FROM candidates c JOIN verdicts v ON v.candidate_id = c.id"
            " WHERE v.verdict = 'accepted' AND v.rests_on IS NOT NULL"
        )
        found: list[tuple[str, float]] = []
        for row in rows:
            record = ledger.show(row["id"])
            found += [
                (row["rests_on"], -float(c["delta_pct"]))
                for c in record["comparisons"]
                if c["workload"] == row["rests_on"] and c["metric"] == "wall"
            ]
    return max(found, key=lambda item: item[1]) if found else None


def _judge_example(example: Example, workdir: Path, console: Console, table: Table) -> bool:
    repo = materialise(example, workdir)
    loaded = load_manifest(repo)
    sandbox = make_sandbox()
    all_met = True
    with Ledger.in_folder(workdir / f"{example.name}-ledger") as ledger:
        for patch in example.patches:
            with LiveProgress(console) as progress:
                judge = Judge(
                    loaded,
                    sandbox=sandbox,
                    ledger=ledger,
                    options=JudgeOptions(),
                    progress=progress.stage,
                    on_sample=progress.sample,
                )
                start = time.perf_counter()
                outcome = judge.judge(read_patch(patch))
            expected = expectation(patch)
            met = meets(expected, outcome.verdict.verdict)
            all_met &= met
            table.add_row(
                example.name,
                patch.name,
                expected,
                outcome.verdict.verdict,
                "yes" if met else "[red]NO[/]",
                outcome.verdict.reasons[0][:110],
                f"{time.perf_counter() - start:.1f}",
            )
    return all_met


def _judge_patches(console: Console) -> int:
    table = Table(
        "example",
        "patch",
        "expected",
        "verdict",
        "met",
        "first reason",
        "s",
        title="speedproof judge on the bundled examples",
    )
    ok = True
    with tempfile.TemporaryDirectory(prefix="speedproof-demo-") as scratch:
        for example in find_examples():
            console.rule(f"{example.name}: {len(example.patches)} patches")
            ok &= _judge_example(example, Path(scratch), console, table)
    Console(width=max(console.width, 170)).print(table)
    console.print("every verdict as expected" if ok else "[red]some verdicts were unexpected[/]")
    return 0 if ok else 1


def main() -> int:
    console = Console()
    if "--judge-patches" in sys.argv[1:]:
        return _judge_patches(console)
    return _campaign(console)


if __name__ == "__main__":
    sys.exit(main())
