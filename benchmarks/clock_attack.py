"""What the runner reads for a run that tries to set the clock back and then sleeps 0.3 s.

The run calls `clock_settime(CLOCK_REALTIME, 0)` (refused in bubblewrap: EPERM) and sleeps
`SLEEP_S`; `run_process` times it from outside, so every wall it records must be at least the
sleep. tests/attacks/test_attacks_runtime.py asserts the refusal; this prints the figures, which
are a timing and so no test's business. Prints what each run said and the walls; no assertions.

    .venv/bin/python benchmarks/clock_attack.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

from speedproof.ground.process import run_process
from speedproof.ground.sandbox import SandboxSpec, build_env, make_sandbox

SLEEP_S = 0.3
CLOCK = textwrap.dedent(
    f"""
    import errno, time
    try:
        time.clock_settime(time.CLOCK_REALTIME, 0.0)
        said = "set"
    except OSError as exc:
        said = errno.errorcode.get(exc.errno, str(exc.errno))
    time.sleep({SLEEP_S})
    print(said)
    """
)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of the attack")
    args = parser.parse_args(argv)
    sandbox = make_sandbox()
    walls: list[float] = []
    said: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="speedproof-clock-") as scratch:
        # bubblewrap mounts a private /tmp: the folder must be bound to be the working directory.
        spec = SandboxSpec(writable=(Path(scratch),), env=build_env([]))
        for _ in range(args.runs):
            ran = run_process(
                ["/usr/bin/python3", "-I", "-c", CLOCK],
                cwd=Path(scratch),
                sandbox=sandbox,
                spec=spec,
                timeout_s=30,
            )
            said.add(ran.stdout.decode().strip() or f"exit {ran.exit_code}: {ran.tail()}")
            walls.append(ran.wall_s)
    print(f"command: {sys.executable} {' '.join(sys.argv)}")
    print(f"the run said: {', '.join(sorted(said))} (EPERM: the clock was not set)")
    print(
        f"wall over {len(walls)} runs, each sleeping {SLEEP_S} s: min {min(walls):.3f} s, "
        f"median {statistics.median(walls):.3f} s, max {max(walls):.3f} s"
    )


if __name__ == "__main__":
    main()
