"""Where the time of a judge run goes: wall seconds per stage, for each example's patches.

Prints one row per judged patch (guard, apply, build, tests, behaviour, measure, total) and the
pairs used, so a change to any stage shows up as figures rather than as a feeling.

    .venv/bin/python benchmarks/judge_stages.py [--pairs N] [--patch GLOB]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from speedproof.examples import find_examples, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.patches import read_patch
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest

STAGES = ("guard", "apply", "build", "tests", "behaviour", "variants", "measure", "total")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=None, help="pairs (default: manifest's)")
    parser.add_argument("--patch", default="*", help="glob of patch names to judge")
    args = parser.parse_args()
    table = Table(
        "example",
        "patch",
        "verdict",
        *STAGES,
        "pairs",
        "looks",
        title=f"judge stages, seconds (load {os.getloadavg()[0]:.2f} at start)",
    )
    with tempfile.TemporaryDirectory(prefix="speedproof-bench-") as scratch:
        for example in find_examples():
            repo = materialise(example, Path(scratch))
            loaded = load_manifest(repo)
            with Ledger.in_folder(Path(scratch) / f"{example.name}-ledger") as ledger:
                judge = Judge(
                    loaded,
                    sandbox=make_sandbox(),
                    ledger=ledger,
                    options=JudgeOptions(pairs=args.pairs),
                )
                for patch in example.patches:
                    if not patch.match(args.patch):
                        continue
                    outcome = judge.judge(read_patch(patch))
                    times = [f"{outcome.timings.get(s, 0.0):.2f}" for s in STAGES]
                    table.add_row(
                        example.name,
                        patch.stem,
                        outcome.verdict.verdict,
                        *times,
                        str(max(outcome.pairs.values(), default=0)),
                        str(outcome.looks),
                    )
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
