"""What the run-time defences cost: a judge's time per candidate, before and after, side by side.

Judges the same bundled patches with two copies of speedproof, interleaved (before, after,
after, before, …) so that a change in the machine's load lands on both: the `src` folder of an
older checkout (`--before`, e.g. a `git worktree add /tmp/old <rev>`) and this one. Each judge
runs in a subprocess of its own, on a fresh copy of each example, with a fixed number of pairs so
that the schedule's stopping point does not move the figures. Prints per patch the median
seconds of every stage and of the whole judgement, and the ratio after/before.

    .venv/bin/python benchmarks/defence_overhead.py --before /tmp/old/src [--patch 'speedup-*'] \
        [--pairs 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
STAGES = ("build", "tests", "inputs", "behaviour", "variants", "measure", "total")

# Run inside the subprocess, against whichever speedproof PYTHONPATH names. It materialises this
# checkout's examples (the patches judged must be the same for both copies) and prints one JSON
# line: {patch: {stage: seconds}}.
_JUDGE = """
import json, sys, tempfile
from pathlib import Path
try:
    from speedproof.judge.evaluate import Judge, JudgeOptions
    from speedproof.judge.patches import read_patch
except ImportError:  # a checkout from before the judge became a package
    from speedproof.evaluate import Judge, JudgeOptions
    from speedproof.judging import read_patch
from speedproof.examples import Example, materialise
from speedproof.ledger import Ledger
try:
    from speedproof.manifest_loading import load_manifest
except ImportError:  # a checkout from before the manifest's loading had a module of its own
    from speedproof.manifest import load_manifest
try:
    from speedproof.ground.sandbox import make_sandbox
except ImportError:  # a checkout from before the ground layer
    from speedproof.sandbox import make_sandbox

examples, pattern, pairs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
found = {}
with tempfile.TemporaryDirectory(prefix="speedproof-overhead-") as scratch:
    for manifest in sorted(examples.glob("*/speedproof.toml")):
        example = Example(manifest.parent.name, manifest.parent)
        patches = [p for p in example.patches if p.match(pattern)]
        if not patches:
            continue
        repo = materialise(example, Path(scratch))
        with Ledger.in_folder(Path(scratch) / f"{example.name}-ledger") as ledger:
            judge = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=ledger,
                          options=JudgeOptions(pairs=pairs))
            for patch in patches:
                outcome = judge.judge(read_patch(patch))
                found[f"{example.name}/{patch.stem}"] = {
                    "verdict": outcome.verdict.verdict, **outcome.timings}
print(json.dumps(found))
"""


def judge_with(src: Path, pattern: str, pairs: int) -> dict[str, dict[str, float | str]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _JUDGE, str(HERE.parent / "examples"), pattern, str(pairs)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"judging with {src} failed:\n{done.stderr[-3000:]}")
    found: dict[str, dict[str, float | str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _median(runs: list[dict[str, float | str]], stage: str) -> float:
    return statistics.median(float(r.get(stage, 0.0)) for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True, help="src folder of the old code")
    parser.add_argument("--patch", default="speedup-*", help="glob of patch names to judge")
    parser.add_argument("--pairs", type=int, default=10, help="fixed pairs a workload")
    parser.add_argument("--repeats", type=int, default=3, help="judgements a side per patch")
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": HERE.parent / "src"}
    runs: dict[tuple[str, str], list[dict[str, float | str]]] = defaultdict(list)
    for index in range(args.repeats):
        order = ["before", "after"] if index % 2 == 0 else ["after", "before"]
        for side in order:
            for patch, timings in judge_with(sides[side], args.patch, args.pairs).items():
                runs[(patch, side)].append(timings)
    table = Table("patch", "side", "verdicts", *STAGES, "after/before")
    for patch in sorted({p for p, _ in runs}):
        before = _median(runs[(patch, "before")], "total")
        for side in ("before", "after"):
            got = runs[(patch, side)]
            verdicts = ",".join(str(r["verdict"]) for r in got)
            ratio = "" if side == "before" else f"{_median(got, 'total') / before:.3f}"
            table.add_row(patch, side, verdicts, *(f"{_median(got, s):.2f}" for s in STAGES), ratio)
    load = os.getloadavg()[0]
    Console(width=220).print(table)
    print(f"{args.repeats} judgements a side, {args.pairs} pairs a workload, load {load:.2f}")


if __name__ == "__main__":
    main()
