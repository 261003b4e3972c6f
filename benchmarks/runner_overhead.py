"""What the timed lane's runner adds to each run, next to hyperfine on the same command.

Two commands: the built logstat example on its shortest representative workload, and `true`
(nearly nothing to run, so what is left is the cost of starting and timing a process). Each is
run by:

- `run_process` without a sandbox: the launcher (`python -I -S`, see ground/process.py) forks
  the command and times it from fork to wait4; `wall` is the figure the ledger records;
- `run_process` in bubblewrap, as every judged run is measured;
- `hyperfine -N` (no shell) on the bare command, and on the same bubblewrap command line
  `run_process` uses, so the cost of bubblewrap shows apart from the launcher's.

For `run_process` two figures: `wall` (what the judge records) and `per call` (perf_counter
around the whole call: the launcher's start, temporary files and reading back the output, i.e.
what a run costs the judge in time). hyperfine's `per call` is its whole process time divided
by the runs it made, warm-ups included. The methods take turns in `--blocks` blocks so that a
drift of the machine lands on each of them; every block starts with 3 warm-up runs a method.
Prints medians and the difference from hyperfine's bare median in ms; no assertions.

hyperfine is the Debian package `hyperfine` (1.15 has no `--input`, so a workload that reads
stdin cannot be compared; logstat's shortest one reads a file).

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/runner_overhead.py [--runs 60] [--blocks 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import run_process
from speedproof.ground.sandbox import Sandbox, SandboxSpec, Unsandboxed, build_env, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.measure.environment import describe_environment, tool_version
from speedproof.manifest_loading import load_manifest

WARMUP = 3
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Command:
    """One command as the runner sees it: argv, folder, the sandbox's spec."""

    name: str
    argv: tuple[str, ...]
    cwd: Path
    spec: SandboxSpec


@dataclass
class Figures:
    """The walls a method measured, and what each call cost in total."""

    walls: list[float] = field(default_factory=list)
    calls: list[float] = field(default_factory=list)


Method = Callable[[Command, int, Figures], None]


def by_runner(sandbox: Sandbox) -> Method:
    """`run_process` in `sandbox`: WARMUP discarded runs, then `runs` kept ones."""

    def method(command: Command, runs: int, figures: Figures) -> None:
        for index in range(WARMUP + runs):
            start = time.perf_counter()
            result = run_process(
                command.argv,
                cwd=command.cwd,
                sandbox=sandbox,
                spec=command.spec,
                timeout_s=TIMEOUT_S,
            )
            elapsed = time.perf_counter() - start
            if not result.ok:
                raise InfrastructureError(f"{command.name} failed: {result.tail(500)}")
            if index >= WARMUP:
                figures.walls.append(result.wall_s)
                figures.calls.append(elapsed)

    return method


def by_hyperfine(executable: str, wrap: Sandbox) -> Method:
    """`hyperfine -N` on the command, wrapped by `wrap` (Unsandboxed: the bare command)."""

    def method(command: Command, runs: int, figures: Figures) -> None:
        argv = wrap.wrap(command.argv, cwd=command.cwd, spec=command.spec)
        with tempfile.TemporaryDirectory(prefix="speedproof-hf-") as scratch:
            export = Path(scratch) / "hyperfine.json"
            hyperfine = [executable, "-N", "--warmup", str(WARMUP), "--runs", str(runs)]
            hyperfine += ["--style", "none", "--export-json", str(export), shlex.join(argv)]
            start = time.perf_counter()
            done = subprocess.run(
                hyperfine, cwd=command.cwd, env=dict(command.spec.env), capture_output=True
            )
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                raise InfrastructureError(f"hyperfine failed: {done.stderr.decode()[-500:]}")
            times = json.loads(export.read_text())["results"][0]["times"]
        figures.walls += [float(t) for t in times]
        figures.calls += [elapsed / (WARMUP + runs)] * runs

    return method


def logstat_command(scratch: Path, sandbox: Sandbox) -> Command:
    """The built logstat on its shortest representative workload (median of 5 bare runs)."""
    repo = materialise(get_example("logstat"), scratch)
    manifest = load_manifest(repo).manifest
    built = toolchain_for(manifest, sandbox).build(Tree("baseline", repo, repo, scratch / "out"))
    if not built.ok or built.program is None:
        raise InfrastructureError(f"logstat does not build:\n{built.log[-2000:]}")
    program = built.program
    workloads = [w for w in manifest.workloads if w.tier == "representative" and not w.stdin]
    medians = {}
    for workload in workloads:
        argv = Invocation(program, workload, tuple(manifest.target.prefix)).argv
        walls = [
            run_process(
                argv, cwd=program.root, sandbox=sandbox, spec=program.spec(), timeout_s=TIMEOUT_S
            ).wall_s
            for _ in range(5)
        ]
        medians[workload.id] = (statistics.median(walls), argv)
    shortest = min(medians, key=lambda w: medians[w][0])
    return Command(f"logstat {shortest}", medians[shortest][1], program.root, program.spec())


def true_command(scratch: Path) -> Command:
    found = shutil.which("true")
    if found is None:
        raise InfrastructureError("no `true` on PATH")
    # bubblewrap mounts a private /tmp: the folder must be bound to be the working directory.
    spec = SandboxSpec(writable=(scratch,), env=build_env([]))
    return Command("true", (found,), scratch, spec)


def measure(command: Command, methods: dict[str, Method], runs: int, blocks: int) -> None:
    figures = {name: Figures() for name in methods}
    share = [runs // blocks + (1 if b < runs % blocks else 0) for b in range(blocks)]
    for block_runs in share:
        for name, method in methods.items():
            method(command, block_runs, figures[name])
    reference = statistics.median(figures["hyperfine -N"].walls)
    print(f"\n{command.name}: {shlex.join(command.argv)}\n")
    print("| method | runs | median wall ms | − hyperfine ms | median per call ms |")
    print("| --- | --- | --- | --- | --- |")
    for name, found in figures.items():
        wall = statistics.median(found.walls)
        call = statistics.median(found.calls)
        row = [name, str(len(found.walls)), f"{wall * 1e3:.2f}"]
        row += [f"{(wall - reference) * 1e3:+.2f}", f"{call * 1e3:.2f}"]
        print("| " + " | ".join(row) + " |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="kept runs per method and command")
    parser.add_argument("--blocks", type=int, default=3, help="turns the methods take")
    args = parser.parse_args(argv)
    if args.runs < args.blocks or args.blocks < 1:
        parser.error("need --runs >= --blocks >= 1")
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        raise SystemExit("hyperfine is not installed (apt-get install hyperfine)")
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    env = describe_environment()
    print(f"machine: cpu {env.cpu_model!r}, cores {env.cores}, governor {env.governor}")
    print(f"{env.bwrap}; {tool_version('hyperfine')}")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    bwrap = make_sandbox()
    methods: dict[str, Method] = {
        "hyperfine -N": by_hyperfine(hyperfine, Unsandboxed()),
        "hyperfine -N, bwrap command": by_hyperfine(hyperfine, bwrap),
        "run_process, no sandbox": by_runner(Unsandboxed()),
        "run_process, bwrap": by_runner(bwrap),
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="speedproof-overhead-") as scratch:
        root = Path(scratch)
        for command in (logstat_command(root, bwrap), true_command(root)):
            measure(command, methods, args.runs, args.blocks)
    print(f"\nload after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
