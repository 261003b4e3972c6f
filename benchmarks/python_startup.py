"""What a built Python target's runs cost as the judge runs them: textstat's workloads, built by
whichever speedproof PYTHONPATH names, run in the sandbox as the timed lane runs them.

Prints per workload the median wall and CPU milliseconds of `--runs` runs of the baseline build,
the instructions one run executes (Cachegrind, as the instruction lane counts them: the same
figure every time, where wall and CPU time move with the machine's load), and whether the run
read its own modules' byte-code from the build (a `-v` import trace of one extra run: "matches"
lines name the `.pyc` files used). Compare two copies of speedproof by running it with each,
alternately:

    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/python_startup.py --runs 40
    .venv/bin/python benchmarks/python_startup.py --runs 40
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.ground.invocation import Invocation
from speedproof.ground.sandbox import Sandbox, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.measure.instructions import count_instructions
from speedproof.judge.measure.runner import run_invocation
from speedproof.manifest_loading import load_manifest

# `--version` is the start-up alone: argparse, the package's modules, nothing read.
EXTRA = ("version", ("--version",))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    sandbox = make_sandbox()
    with tempfile.TemporaryDirectory(prefix="speedproof-startup-") as scratch:
        repo = materialise(get_example("textstat"), Path(scratch))
        manifest = load_manifest(repo).manifest
        toolchain = toolchain_for(manifest, sandbox)
        tree = Tree("baseline", repo, repo, Path(scratch) / "out")
        built = toolchain.build(tree)
        if not built.ok or built.program is None:
            print(built.log, file=sys.stderr)
            return 1
        program = built.program
        print(f"speedproof from {sys.modules['speedproof'].__file__}")
        print(f"build: {built.duration_s:.2f} s; env PYTHONPYCACHEPREFIX=", end="")
        print(program.env.get("PYTHONPYCACHEPREFIX", "(unset)"))
        workloads = [*manifest.workloads]
        workloads.append(workloads[0].model_copy(update={"id": EXTRA[0], "args": list(EXTRA[1])}))
        for workload in workloads:
            if workload.id not in ("novel", "forum-stdin-trigrams", "version"):
                continue
            _time(Invocation(program, workload), sandbox, args.runs)
        _trace(Invocation(program, workloads[-1]), sandbox)
    return 0


def _time(invocation: Invocation, sandbox: Sandbox, runs: int) -> None:
    walls, cpus = [], []
    for _ in range(runs):
        result = run_invocation(invocation, sandbox=sandbox, timeout_s=60)
        walls.append(result.wall_s * 1000)
        cpus.append(result.cpu_s * 1000)
    counted = count_instructions(invocation, sandbox=sandbox, timeout_s=600, repeats=1)
    ir = counted.runs[0].ir
    print(
        f"{invocation.workload.id:24} wall {statistics.median(walls):7.1f} ms  "
        f"cpu {statistics.median(cpus):7.1f} ms  ({runs} runs)  "
        f"instructions {ir / 1e6 if ir else float('nan'):9.2f} M"
    )


def _trace(invocation: Invocation, sandbox: Sandbox) -> None:
    program = invocation.program
    traced = dataclasses.replace(program, argv=(program.argv[0], "-v", *program.argv[1:]))
    result = run_invocation(Invocation(traced, invocation.workload), sandbox=sandbox, timeout_s=60)
    lines = result.stderr.decode(errors="replace").splitlines()
    own = [line for line in lines if "matches" in line and "textstat" in line]
    stdlib = [line for line in lines if "matches" in line and "textstat" not in line]
    print(f"-v: {len(own)} textstat modules and {len(stdlib)} others read from byte-code")
    for line in own[:3]:
        print("   ", line)


if __name__ == "__main__":
    raise SystemExit(main())
