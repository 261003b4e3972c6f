"""What a command costs before it does anything: CLI start-up, and the time to a guard verdict.

Prints the median (and the range) over N runs of:
- `speedproof --help`, wall seconds of the whole process;
- `python -c "import speedproof.cli"`, wall seconds, and `-X importtime`'s own total for it;
- `speedproof manifest validate` on the logstat example;
- `speedproof judge attack-edit-test.patch --json` in a freshly materialised logstat repository:
  the patch edits a test file, so the guard refuses it before anything is built, and the wall
  time is start-up plus the guard plus the ledger.

The load average is printed before and after: on a 2-core machine at load 2-3 these figures
double, so compare runs taken at similar loads.

    .venv/bin/python benchmarks/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from speedproof.examples import get_example, materialise

PYTHON = sys.executable
SPEEDPROOF = Path(PYTHON).parent / "speedproof"


def _command() -> list[str]:
    return [str(SPEEDPROOF)] if SPEEDPROOF.exists() else [PYTHON, "-m", "speedproof"]


def _wall(argv: Sequence[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(list(argv), cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


def _importtime_s() -> float:
    """`-X importtime`'s cumulative figure for speedproof.cli, in seconds."""
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", "import speedproof.cli"],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in reversed(done.stderr.splitlines()):
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[2] == "speedproof.cli":
            return int(fields[1]) / 1e6
    raise RuntimeError(f"no speedproof.cli line in -X importtime output:\n{done.stderr[-2000:]}")


def _row(name: str, figures: list[float]) -> str:
    return (
        f"{name:<34} median {statistics.median(figures):6.3f} s  "
        f"(min {min(figures):.3f}, max {max(figures):.3f}, n={len(figures)})"
    )


def _guard_runs(runs: int) -> list[float]:
    patch = get_example("logstat").folder / "patches" / "attack-edit-test.patch"
    with tempfile.TemporaryDirectory(prefix="speedproof-startup-") as scratch:
        repo = materialise(get_example("logstat"), Path(scratch))
        ledger = Path(scratch) / "ledger"
        argv = [*_command(), "judge", str(patch), "--json", "--ledger", str(ledger)]
        return [_wall(argv, cwd=repo) for _ in range(runs)]


def _validate_runs(runs: int) -> list[float]:
    argv = [*_command(), "manifest", "validate", str(get_example("logstat").folder)]
    return [_wall(argv) for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (default 7)")
    args = parser.parse_args()
    runs = max(1, args.runs)
    before = os.getloadavg()
    print(f"load average at start: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    print(_row("speedproof --help", [_wall([*_command(), "--help"]) for _ in range(runs)]))
    imports = [_wall([PYTHON, "-c", "import speedproof.cli"]) for _ in range(runs)]
    print(_row("import speedproof.cli (wall)", imports))
    print(_row("import speedproof.cli (importtime)", [_importtime_s() for _ in range(runs)]))
    print(_row("manifest validate (wall)", _validate_runs(runs)))
    print(_row("judge → guard verdict (wall)", _guard_runs(runs)))
    after = os.getloadavg()
    print(f"load average at end:   {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")


if __name__ == "__main__":
    main()
