"""The child process of the adequacy run: it loads each source, calls it on every input under a
wall budget and an address-space limit, and reports each outcome on its stdout as a JSON line.

It runs code derived from a trusted reference (mutants, traps), which can still loop forever or
allocate without bound; the parent (`adequacy_runner`) kills it when it overruns even its budget.
Only the standard library is imported here, so a fresh worker starts fast.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

MEMORY_LIMIT_BYTES = 1 << 30
"""RLIMIT_AS of the worker: 1 GiB, far above an honest reference on small inputs."""
STDERR_LIMIT_BYTES = 16 << 20
"""RLIMIT_FSIZE of the worker: its stderr goes to a temporary file, so a printing loop stops there
(a write past 16 MiB fails with EFBIG, SIGXFSZ being ignored)."""
RECURSION_LIMIT = 3000
"""The worker's recursion limit: 3x Python's default, well below a C-stack overflow."""
OUTPUT_CAP_CHARS = 16 << 20
"""A canonical outcome above 16 Mi characters is `error:OutputTooLarge`, not kept in memory."""
JSON_DEPTH_LIMIT = 200
"""Outputs nested deeper than 200 are `error:NestedTooDeep` (json.dumps would recurse)."""


class _Budget(BaseException):
    """Raised by SIGALRM in the worker's main thread; a BaseException so `except Exception` in a
    source cannot swallow it."""


class _NonJson(Exception):
    """An output or argument that is not strict JSON; the message is the offending type."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Budget


def _lower(kind: int, limit: int) -> None:
    """Lower the soft limit `kind` to `limit`, never above the hard limit already in force."""
    _, hard = resource.getrlimit(kind)
    soft = limit if hard == resource.RLIM_INFINITY else min(hard, limit)
    resource.setrlimit(kind, (soft, hard))


def _limit() -> None:
    _lower(resource.RLIMIT_AS, MEMORY_LIMIT_BYTES)
    _lower(resource.RLIMIT_FSIZE, STDERR_LIMIT_BYTES)
    _lower(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.setrecursionlimit(RECURSION_LIMIT)


def _private_stdout() -> TextIO:
    """The report channel: a copy of fd 1, after which fd 1 and `sys.stdout` go to stderr."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def _check_json(value: object, depth: int) -> None:
    if depth > JSON_DEPTH_LIMIT:
        raise _NonJson("NestedTooDeep")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return
    if isinstance(value, float) and kind is float:
        if not math.isfinite(value):
            raise _NonJson("float")
        return
    if isinstance(value, list) and kind is list:
        for item in value:
            _check_json(item, depth + 1)
        return
    if isinstance(value, dict) and kind is dict:
        _check_dict(value, depth)
        return
    raise _NonJson(kind.__name__)


def _check_dict(value: dict[object, object], depth: int) -> None:
    for key, item in value.items():
        if type(key) is not str:
            raise _NonJson("dict")
        _check_json(item, depth + 1)


def _canonical(output: object, arguments: object) -> str:
    """Type-strict canonical JSON of `[output, arguments]`: 1, 1.0 and true all differ."""
    try:
        _check_json([output, arguments], 0)
        text = json.dumps([output, arguments], sort_keys=True, separators=(",", ":"))
    except _NonJson as exc:
        return f"error:{exc}"
    except MemoryError:
        return "error:MemoryError"
    return "error:OutputTooLarge" if len(text) > OUTPUT_CAP_CHARS else text


def _timed(call: Callable[[], object], seconds: float) -> object:
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _load(source: str, function_name: str, seconds: float) -> Callable[..., object]:
    namespace: dict[str, Any] = {"__builtins__": builtins}
    code = compile(source, "<source>", "exec", dont_inherit=True)
    _timed(lambda: exec(code, namespace), seconds)
    function: Callable[..., object] = namespace[function_name]
    return function


def _call_once(function: Callable[..., object], args_text: str, deadline: float) -> str:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return "timeout"
    # A fresh deep copy of the arguments per call, made by re-parsing their JSON.
    arguments: list[object] = json.loads(args_text)
    try:
        output = _timed(lambda: function(*arguments), remaining)
    except _Budget:
        return "timeout"
    except BaseException as exc:  # the source's own failure, reported by type only
        return f"error:{type(exc).__name__}"
    return _canonical(output, arguments)


def _load_outcome(source: str, function_name: str, seconds: float) -> Callable[..., object] | str:
    try:
        return _load(source, function_name, seconds)
    except _Budget:
        return "timeout"
    except BaseException as exc:
        return f"error:{type(exc).__name__}"


def _run_source(
    job: dict[str, Any], index: int, source: str, expected: list[str] | None, report: TextIO
) -> list[str]:
    """Run one source over the inputs, reporting each outcome as it comes; its outcomes."""
    budget = float(job["budgets"][str(index)])
    deadline = time.monotonic() + budget
    loaded = _load_outcome(source, job["function_name"], budget)
    outcomes: list[str] = []
    for position, args_text in enumerate(job["inputs_text"]):
        if expected is not None and position >= len(expected):
            break  # the reference itself stopped here: nothing left to compare against
        outcome = loaded if isinstance(loaded, str) else _call_once(loaded, args_text, deadline)
        outcomes.append(outcome)
        report.write(json.dumps([index, position, outcome]) + "\n")
        report.flush()
        if isinstance(loaded, str) or outcome == "timeout":
            break
        if job["stop"] and expected is not None and outcome != expected[position]:
            break
    return outcomes


def worker_main() -> None:
    """The worker's entry point (run as `python -c`): read the job on stdin, report on stdout.

    Reports are JSON lines: `["ready"]` once limited, `[source, input, outcome]` per input and
    `[source, null, seconds]` when a source is done.
    """
    job: dict[str, Any] = json.load(sys.stdin)
    job["inputs_text"] = [json.dumps(args) for args in job.pop("inputs")]
    report = _private_stdout()
    _limit()
    report.write('["ready"]\n')
    report.flush()
    expected: list[str] | None = job["expected"]
    for index, source in job["sources"]:
        started = time.monotonic()
        is_reference = index == job["reference"]
        outcomes = _run_source(job, index, source, None if is_reference else expected, report)
        expected = outcomes if is_reference else expected
        report.write(json.dumps([index, None, time.monotonic() - started]) + "\n")
        report.flush()
