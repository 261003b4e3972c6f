"""The parent side of the adequacy run: every source on every input in one worker process
(`adequacy_worker`), a fresh worker for the rest when one dies or overruns, and one `Outcomes` per
source."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only a type here: importing case.py would pull pydantic (~0.2 s) into every
    # process that imports this module.
    from speedproof.functions.case import Json


DEFAULT_TIMEOUT_S = 2.0
"""Default wall budget for one source over all its inputs."""
GRACE_S = 1.0
"""The parent kills the worker 1 s after a source's budget has run out without a report."""
STARTUP_S = 30.0
"""How long the worker may take to import and report ready (a busy 2-core machine)."""

_SRC_ROOT = Path(__file__).resolve().parents[2]
_BOOT = "from speedproof.corpus.adequacy_worker import worker_main; worker_main()"
_EOF = b""


@dataclass(frozen=True)
class Outcomes:
    """What one source did on the inputs, in input order.

    Each outcome is the canonical, type-strict JSON of `[output, arguments-after-the-call]`, or
    `error:TypeName` (an exception, or a non-JSON value such as a tuple or NaN), or `timeout`.
    The tuple is shorter than the inputs when the source timed out or stopped at its first
    difference. `first_difference` is the first input index whose outcome differs from the
    reference's (a missing outcome counts as a difference); None for the reference itself.
    """

    source_index: int
    outcomes: tuple[str, ...]
    first_difference: int | None
    seconds: float

    @property
    def differs(self) -> bool:
        """Whether the source differed from the reference on any input it was compared on."""
        return self.first_difference is not None

    def ok(self, index: int) -> bool:
        """Whether input `index` produced a JSON output (not an error, timeout or no run)."""
        return index < len(self.outcomes) and self.outcomes[index].startswith("[")

    def output(self, index: int) -> Json:
        """The decoded output on input `index`; ValueError unless `ok(index)`."""
        if not self.ok(index):
            raise ValueError(f"input {index} has no output")
        value: Json = json.loads(self.outcomes[index])[0]
        return value


@dataclass
class _Progress:
    """The parent's record across worker restarts: outcomes so far, and which sources are done."""

    order: list[int]
    reference: int
    outcomes: dict[int, list[str]] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)

    def pending(self) -> list[int]:
        return [index for index in self.order if index not in self.seconds]

    def expected(self) -> list[str] | None:
        if self.reference not in self.seconds:
            return None
        return self.outcomes.get(self.reference, [])

    def add(self, index: int, outcome: str) -> None:
        self.outcomes.setdefault(index, []).append(outcome)

    def finish(self, index: int, seconds: float) -> None:
        self.seconds[index] = seconds

    def result(self, count: int) -> list[Outcomes]:
        want = tuple(self.outcomes.get(self.reference, []))
        out: list[Outcomes] = []
        for index in range(count):
            got = tuple(self.outcomes.get(index, []))
            first = None if index == self.reference else _first_difference(got, want)
            out.append(Outcomes(index, got, first, self.seconds[index]))
        return out


def _first_difference(got: tuple[str, ...], want: tuple[str, ...]) -> int | None:
    for index, (left, right) in enumerate(zip(got, want, strict=False)):
        if left != right:
            return index
    return len(got) if len(got) < len(want) else None


def run_sources(
    sources: Sequence[str],
    function_name: str,
    inputs: Sequence[list[Json]],
    *,
    reference_index: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    reference_timeout_s: float | None = None,
    stop_at_first_difference: bool = True,
) -> list[Outcomes]:
    """Run every source on every input in one worker process; one `Outcomes` per source.

    The reference runs first, over all inputs. Each source gets `timeout_s` of wall time over all
    its inputs (the reference `reference_timeout_s`, default the same); a source over budget gets
    `timeout` and its remaining inputs are skipped. With `stop_at_first_difference`, a
    non-reference source stops at its first input whose outcome differs from the reference's.
    A worker that dies mid-source (killed after its budget plus 1 s, or crashed) is replaced and
    the remaining sources go on in a fresh one.
    """
    if not 0 <= reference_index < len(sources):
        raise ValueError(f"reference_index {reference_index} is outside {len(sources)} sources")
    order = [reference_index, *(i for i in range(len(sources)) if i != reference_index)]
    progress = _Progress(order, reference_index)
    budgets = {i: timeout_s for i in order}
    budgets[reference_index] = timeout_s if reference_timeout_s is None else reference_timeout_s
    job: dict[str, Any] = {
        "function_name": function_name,
        "inputs": list(inputs),
        "reference": reference_index,
        "budgets": {str(i): b for i, b in budgets.items()},
        "stop": stop_at_first_difference,
    }
    while pending := progress.pending():
        job["sources"] = [[i, sources[i]] for i in pending]
        job["expected"] = progress.expected()
        _run_worker(job, progress, budgets)
    return progress.result(len(sources))


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_SRC_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    # Fixed string hashing: set iteration order must not change when a worker is replaced.
    env["PYTHONHASHSEED"] = "0"
    return env


def _run_worker(job: dict[str, Any], progress: _Progress, budgets: dict[int, float]) -> None:
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=_worker_env(),
            start_new_session=True,
        )
        try:
            _send(process, job)
            _collect(process, progress, budgets, errors)
        finally:
            _stop(process)


def _send(process: subprocess.Popen[bytes], job: dict[str, Any]) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(json.dumps(job).encode("utf-8"))
        process.stdin.close()
    except BrokenPipeError:
        pass  # the worker died at start; `_collect` reports it with its stderr


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _infrastructure(process: subprocess.Popen[bytes], errors: IO[bytes], what: str) -> None:
    _stop(process)
    errors.seek(0)
    tail = errors.read()[-2000:].decode("utf-8", "replace")
    raise RuntimeError(f"adequacy worker {what} (exit {process.returncode}): {tail}")


def _collect(
    process: subprocess.Popen[bytes],
    progress: _Progress,
    budgets: dict[int, float],
    errors: IO[bytes],
) -> None:
    """Read the worker's reports until it is done, overruns a budget or dies."""
    assert process.stdout is not None
    lines = _Lines(process.stdout)
    if lines.next(time.monotonic() + STARTUP_S) != b'["ready"]':
        _infrastructure(process, errors, "did not start")
    started = time.monotonic()
    while pending := progress.pending():
        current = pending[0]
        line = lines.next(started + budgets[current] + GRACE_S)
        if line is None or line == _EOF:
            # Over budget with no report (a loop in C code), or dead (a crash): the source ends
            # here, and the caller starts a fresh worker for the rest.
            progress.add(current, "timeout" if line is None else "error:WorkerCrash")
            progress.finish(current, time.monotonic() - started)
            return
        index, position, value = json.loads(line)
        if position is None:
            progress.finish(index, float(value))
            started = time.monotonic()
        else:
            progress.add(index, str(value))


class _Lines:
    """Newline-separated records from a pipe, each awaited until a deadline."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.fd = stream.fileno()
        self.buffer = bytearray()
        self.eof = False
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)

    def next(self, deadline: float) -> bytes | None:
        """The next line; None when the deadline passes first, `_EOF` at the end of the pipe."""
        while (end := self.buffer.find(b"\n")) < 0:
            if self.eof:
                return _EOF
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.selector.select(remaining):
                return None
            chunk = os.read(self.fd, 1 << 16)
            self.eof = not chunk
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line
