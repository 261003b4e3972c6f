"""The instruction lane beside the timed lane, on the bundled patches: does it agree?

Judges bundled patches of an example (fresh copy, real sandbox) with the instruction lane on and
a fixed number of timed pairs, and prints per patch and representative workload: the verdict,
the timed wall change with its p, and the instruction change with how it was read (exact, or as
samples by Welch's t when a side's counts vary between runs, as Go's do) and whether it is
significant. The figures behind docs/adr/0044: whether an instruction change may shorten or
strengthen a timed verdict. No assertions.

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/instruction_lane.py [--example logstat] \
        [--patch 'speedup-*'] [--pairs 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.patches import read_patch
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", default="logstat")
    parser.add_argument("--patch", default="*", help="glob over the example's patch names")
    parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args()
    example = get_example(args.example)
    patches = [
        p for p in example.patches if p.match(args.patch) and not p.stem.startswith("attack-")
    ]
    print("| patch | verdict | workload | wall | instructions | read as | significant |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="speedproof-ir-") as scratch:
        repo = materialise(example, Path(scratch))
        with Ledger.in_folder(Path(scratch) / "ledger") as ledger:
            judge = Judge(
                load_manifest(repo),
                sandbox=make_sandbox(),
                ledger=ledger,
                options=JudgeOptions(pairs=args.pairs, instructions=True),
            )
            for patch in patches:
                outcome = judge.judge(read_patch(patch))
                rows = {
                    (c.workload, c.lane): c
                    for c in outcome.comparisons
                    if c.tier == "representative" and c.metric in ("wall", "instructions")
                }
                for (workload, lane), ir in sorted(rows.items()):
                    if lane != "instructions":
                        continue
                    wall = rows.get((workload, "timed"))
                    how = "exact" if ir.exact else ("samples" if ir.finite else "no figure")
                    print(
                        f"| {patch.stem} | {outcome.verdict.verdict} | {workload} | "
                        f"{wall.render() if wall else '—'} | {ir.render()} | {how} | "
                        f"{'yes' if ir.significant else 'no'} |",
                        flush=True,
                    )
    print(f"\n{time.perf_counter() - started:.0f} s, {args.pairs} timed pairs a workload")


if __name__ == "__main__":
    main()
