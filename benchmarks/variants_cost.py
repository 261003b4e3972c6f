"""What the variants gate costs a judgement: CPU and wall seconds, whole and the gate's share.

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/variants_cost.py logstat speedup-hoist-regexp

Judges one bundled patch on a fresh copy of its example and prints one JSON line: the CPU
seconds of the judge and every child (`getrusage`) around the whole judgement and around the
variants gate, the judge's wall `timings`, and the figures of the representatives and the twin
(docs/adr/0057).
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import speedproof.judge.evaluate as evaluate
from speedproof.examples import get_example, materialise
from speedproof.ground.sandbox import make_sandbox
from speedproof.judge.evaluate import Judge
from speedproof.ledger import Ledger
from speedproof.manifest_loading import load_manifest


def cpu() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(example_name: str, patch_name: str) -> dict[str, Any]:
    spent: dict[str, Any] = {}
    # The judge's own reference to the gate, wrapped for the length of this run.
    gate = vars(evaluate)["variants_gate"]

    def timed_gate(*args: Any, **kwargs: Any) -> Any:
        start_cpu, start = cpu(), time.perf_counter()
        found = gate(*args, **kwargs)
        spent["variants_cpu"] = round(cpu() - start_cpu, 2)
        spent["variants_wall"] = round(time.perf_counter() - start, 2)
        spent["made"] = found.detail.get("made")
        return found

    vars(evaluate)["variants_gate"] = timed_gate
    example = get_example(example_name)
    with tempfile.TemporaryDirectory() as tmp:
        repo = materialise(example, Path(tmp))
        patch = (example.folder / "patches" / f"{patch_name}.patch").read_text()
        with Ledger.in_folder(Path(tmp) / "ledger") as book:
            start_cpu = cpu()
            outcome = Judge(load_manifest(repo), sandbox=make_sandbox(), ledger=book).judge(patch)
            total_cpu = round(cpu() - start_cpu, 2)
    walls = [c for c in outcome.comparisons if c.metric == "wall" and c.lane == "timed"]
    return {
        "example": example_name,
        "patch": patch_name,
        "verdict": outcome.verdict.verdict,
        "total_cpu": total_cpu,
        **spent,
        "timings": {k: round(v, 2) for k, v in outcome.timings.items()},
        "representative": [
            f"{c.workload} {c.render()}" for c in walls if c.tier == "representative"
        ],
        "twin": [f"{c.workload} {c.render()}" for c in walls if c.workload.endswith("~twin")],
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
