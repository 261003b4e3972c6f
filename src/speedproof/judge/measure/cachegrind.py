"""Cachegrind, shared by its two users: the command prefix, the tool check and the output parser.

Function mode (`speedproof.functions.instruction_cost`) counts a harness run and reads the
count from a pipe; the instruction lane (`speedproof.judge.measure.instructions`) counts a whole
workload run and reads it from files in a folder bound writable into the sandbox. Both run
`setarch <machine> -R valgrind --tool=cachegrind --cache-sim=no --branch-sim=no -q`:

- `setarch -R` turns address randomisation off for valgrind and everything it runs. With it on,
  the stack and heap start at a different address each run, and anything that hashes or orders
  by address executes a different number of instructions (ADR 0010).
- `--cache-sim=no --branch-sim=no` leaves `Ir` as the only event: simulating caches would make
  a run 2-3x slower and add figures no policy reads.
- `-q` keeps valgrind's banner out of the program's stderr. Valgrind 3.19 still prints warnings
  about the host's cache geometry (`--1-- warning: L3 cache found …`) even with the simulation
  off, so a caller that compares the program's stderr must also pass `log_file`. With a log file
  `-q` is left out: the banner and the `I refs` summary go to the file, where they say which
  processes started and which ended with a count (`speedproof.judge.measure.escapes`).
- `--command-line-only=yes`: valgrind reads no `.valgrindrc` and no `VALGRIND_OPTS`, and
  passes that on to every child it follows. Without it a `.valgrindrc` the candidate adds to
  its own folder, the run's working directory, could say `--trace-children-skip=*`: the child
  then runs natively and its instructions are not counted (docs/adr/0064).
"""

from __future__ import annotations

import functools
import platform
import shutil
import subprocess

from speedproof.ground.errors import InfrastructureError


class MeasurementError(InfrastructureError):
    """Cachegrind ran but its output is missing or not what this module can read."""


class CachegrindUnavailable(InfrastructureError):
    """valgrind (or setarch, which turns address randomisation off) is missing or does not run."""


def cachegrind_prefix(
    out_file: str,
    *,
    log_file: str | None = None,
    trace_children: bool = False,
    setarch: str = "setarch",
    valgrind: str = "valgrind",
) -> tuple[str, ...]:
    """The command prefix that runs a command under Cachegrind without address randomisation.

    `out_file` and `log_file` may hold `%p` (valgrind puts the process id there), which a run
    with `trace_children` needs: every process it starts writes its own output file.
    """
    prefix = [setarch, platform.machine(), "-R", valgrind, "--command-line-only=yes"]
    prefix.append("--tool=cachegrind")
    prefix += ["--cache-sim=no", "--branch-sim=no"]
    if log_file is None:
        prefix.append("-q")
    if trace_children:
        prefix.append("--trace-children=yes")
    if log_file is not None:
        prefix.append(f"--log-file={log_file}")
    prefix.append(f"--cachegrind-out-file={out_file}")
    return tuple(prefix)


def cachegrind_wrapper() -> tuple[str, ...]:
    """Function mode's prefix: the count goes to the harness's side pipe, `{side_fd}`."""
    return cachegrind_prefix("/proc/self/fd/{side_fd}")


def parse_total_ir(text: str) -> int:
    """Total Ir from a Cachegrind output file: its `events:` must be Ir alone, one `summary:`."""
    events = [line for line in text.splitlines() if line.startswith("events:")]
    summaries = [line for line in text.splitlines() if line.startswith("summary:")]
    if len(events) != 1 or events[0].split()[1:] != ["Ir"]:
        raise MeasurementError(f"cachegrind output has events {events!r}, expected one 'Ir'")
    if len(summaries) != 1:
        raise MeasurementError(f"cachegrind output has {len(summaries)} summary lines, not 1")
    fields = summaries[0].split()[1:]
    if len(fields) != 1 or not fields[0].isdigit():
        raise MeasurementError(f"unreadable cachegrind summary {summaries[0]!r}")
    return int(fields[0])


@functools.cache
def _version(valgrind: str) -> str:
    try:
        done = subprocess.run(
            [valgrind, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CachegrindUnavailable(f"{valgrind} does not run: {exc}") from exc
    said = done.stdout.strip()
    if done.returncode != 0 or not said.startswith("valgrind-"):
        raise CachegrindUnavailable(
            f"{valgrind} --version answered {said or done.stderr.strip()!r} "
            f"(exit {done.returncode})"
        )
    return said


def locate_cachegrind(path: str | None = None) -> tuple[str, str, str]:
    """(setarch, valgrind, version) found on `path` (default: PATH), or CachegrindUnavailable.

    The lane fails closed: without valgrind there is no count, never a silent zero or a skip.
    """
    valgrind = shutil.which("valgrind", path=path)
    if valgrind is None:
        raise CachegrindUnavailable(
            "valgrind is not installed (apt-get install valgrind); the instruction lane "
            "needs it to count instructions"
        )
    setarch = shutil.which("setarch", path=path)
    if setarch is None:
        raise CachegrindUnavailable(
            "setarch is not installed (apt-get install util-linux); the instruction lane "
            "needs it to turn address randomisation off"
        )
    return setarch, valgrind, _version(valgrind)
