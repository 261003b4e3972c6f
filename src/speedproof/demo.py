"""`make demo`: judge every bundled example patch and print what each came to.

Each example is laid out as a fresh git repository in a temporary folder, judged in the real
sandbox with the manifest's own settings, and recorded in a ledger beside it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from speedproof.evaluate import Judge, JudgeOptions
from speedproof.examples import Example, expectation, find_examples, materialise, meets
from speedproof.judging import read_patch
from speedproof.ledger import Ledger
from speedproof.manifest import load_manifest
from speedproof.sandbox import make_sandbox
from speedproof.view import LiveProgress


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
            console.print(f"{example.name}/{patch.name}: [bold]{outcome.verdict.verdict}[/]")
    return all_met


def main() -> int:
    console = Console()
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


if __name__ == "__main__":
    sys.exit(main())
