"""What counting unseen workloads costs the instruction lane, and the counts it reads.

Judges two bundled patches of an example (fresh copy, real sandbox, a fixed number of timed
pairs) with `primary_metric = "instructions"`, one Judge for both, so the second judgement finds
the baseline's counts of its fixed workloads cached, as a campaign does. Prints, per judgement
and counted workload: its tier, the seconds the lane spent on it (both sides, every run), the
baseline's and the candidate's counts, and the verdict. The figures behind docs/adr/0064. No
assertions.

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/instruction_lane_unseen.py \
        [--example textstat] [--patch noop-comment --patch speedup-stopword-set] [--pairs 6]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.patches import read_patch
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest


def _resting_on_instructions(repo: Path) -> None:
    manifest = repo / "speedproof.toml"
    text = manifest.read_text().replace("[policy]\n", '[policy]\nprimary_metric = "instructions"\n')
    manifest.write_text(text)
    identity = ["-c", "user.name=b", "-c", "user.email=b@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "commit", "-qam", "instructions"], cwd=repo, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", default="textstat")
    parser.add_argument("--patch", action="append", default=[])
    parser.add_argument("--pairs", type=int, default=6)
    args = parser.parse_args()
    example = get_example(args.example)
    names = args.patch or ["noop-comment", "speedup-stopword-set"]
    print("| patch | workload | tier | lane s | baseline Ir | candidate Ir | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="speedproof-ir-unseen-") as scratch:
        repo = materialise(example, Path(scratch))
        _resting_on_instructions(repo)
        with Ledger.in_folder(Path(scratch) / "ledger") as ledger:
            judge = Judge(
                load_manifest(repo),
                sandbox=make_sandbox(),
                ledger=ledger,
                options=JudgeOptions(pairs=args.pairs, instructions=True),
            )
            for name in names:
                outcome = judge.judge(read_patch(example.folder / "patches" / f"{name}.patch"))
                tiers = {c.workload: c.tier for c in outcome.comparisons}
                for gate in outcome.gates:
                    if not gate.name.startswith("instructions:"):
                        continue
                    workload = gate.name.removeprefix("instructions:")
                    print(
                        f"| {name} | {workload} | {tiers.get(workload, '?')} "
                        f"| {gate.duration_s:.1f} | {gate.detail['baseline']} "
                        f"| {gate.detail['candidate']} | {outcome.verdict.verdict} |"
                    )
                print(f"<!-- {name}: {' '.join(outcome.verdict.reasons)} -->")


if __name__ == "__main__":
    main()
