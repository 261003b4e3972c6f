"""Are a case's inputs good enough to reject wrong candidates? Mutants and traps say.

The verifier accepts a candidate that agrees with the reference on every verifier input, so a
case whose inputs cannot tell the reference from a plausible mistake is a free reward. This module
measures that on the generator side: it runs single-change mutants of the reference
(`mutants.py`) and a few generic wrong answers (`return 0`, the most common output, the reference
cut to its first K items, ...) on the case's verifier inputs and counts how many of them the
inputs reject. A mutant that no verifier input rejects is run again on a larger equivalence
sample: if that sample tells it apart it is a survivor (the inputs are weak there), otherwise it
is presumed equivalent and left out of the kill rate.

Everything run here is derived from the trusted reference; no candidate code comes near it. Still,
a mutant can loop forever or allocate without bound, so all sources run in one child process with
an address-space limit and a per-source wall budget, and the parent kills the child when it
overruns even that (a C-level loop such as `sum(range(10**15))` never lets a signal handler run).
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

from speedproof.corpus.mutants import mutants as make_mutants

if TYPE_CHECKING:
    # Only a type here: importing case.py would pull pydantic (~0.2 s) into every worker start.
    from speedproof.functions.case import Json

DEFAULT_TIMEOUT_S = 2.0
"""Default wall budget for one source over all its inputs."""
REFERENCE_TIMEOUT_S = 60.0
"""`assess`'s budget for the trusted reference itself: it must finish, so it gets plenty."""
MIN_MUTANT_BUDGET_S = 0.25
"""`assess` gives a mutant max(0.25 s, 10 x the reference's time on the same inputs)."""
MUTANT_BUDGET_FACTOR = 10.0
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
GRACE_S = 1.0
"""The parent kills the worker 1 s after a source's budget has run out without a report."""
STARTUP_S = 30.0
"""How long the worker may take to import and report ready (a busy 2-core machine)."""

_SRC_ROOT = Path(__file__).resolve().parents[2]
_BOOT = "from speedproof.corpus.adequacy import worker_main; worker_main()"
_EOF = b""


# --- results ------------------------------------------------------------------------------------


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


# --- the parent side ----------------------------------------------------------------------------


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


# --- the worker side (runs in the child) --------------------------------------------------------


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


# --- traps --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trap:
    """A generic wrong candidate that every adequate case must reject."""

    kind: str
    source: str


def _canonical_json(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _most_common(values: Sequence[Json]) -> Json:
    """The most common value by type-strict canonical JSON (ties: the first seen)."""
    text, _ = Counter(_canonical_json(v) for v in values).most_common(1)[0]
    value: Json = json.loads(text)
    return value


def _reference_outputs(reference: Outcomes) -> list[Json]:
    return [reference.output(i) for i in range(len(reference.outcomes)) if reference.ok(i)]


def _list_arguments(inputs: Sequence[list[Json]], arg_names: Sequence[str]) -> list[str]:
    """Names of the arguments that are a list in every input."""
    if not inputs:
        return []
    return [
        name
        for position, name in enumerate(arg_names)
        if all(position < len(args) and isinstance(args[position], list) for args in inputs)
    ]


def _function_source(function_name: str, arg_names: Sequence[str], expression: str) -> str:
    text = f"def {function_name}({', '.join(arg_names)}):\n    return {expression}\n"
    return ast.unparse(ast.parse(text))


def _truncated(reference_source: str, function_name: str, name: str, prefix: int) -> str:
    tree = ast.parse(reference_source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function_name:
            node.body.insert(0, ast.parse(f"{name} = {name}[:{prefix}]").body[0])
    return ast.unparse(tree)


def _constant_traps(outputs: list[Json], arg_names: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, returned expression) pairs that do not depend on list arguments."""
    traps: list[tuple[str, str]] = []
    if outputs:
        traps.append(("most-common-output", repr(_most_common(outputs))))
    traps += [("return-0", "0"), ("return-empty-list", "[]"), ("return-none", "None")]
    if arg_names:
        traps.append(("first-argument", arg_names[0]))
    if len(arg_names) >= 2:
        traps.append(("identity", f"[{', '.join(arg_names)}]"))
    return traps


def _per_item_traps(outputs: list[Json], lists: list[str]) -> list[tuple[str, str]]:
    """`[C for _ in a]` per list argument, C the most common item of list-valued outputs."""
    if not outputs or not all(isinstance(out, list) for out in outputs):
        return []
    items = [item for out in outputs if isinstance(out, list) for item in out]
    if not items:
        return []
    common = repr(_most_common(items))
    return [("constant-per-item", f"[{common} for _ in {name}]") for name in lists]


def generic_traps(
    reference_outcomes: Outcomes,
    inputs: Sequence[list[Json]],
    function_name: str,
    arg_names: Sequence[str],
    *,
    reference_source: str | None = None,
    prefix: int = 30,
) -> list[Trap]:
    """The generic wrong candidates for a case whose reference produced `reference_outcomes`.

    `truncated-prefix` (the reference with its first list argument cut to `a[:prefix]`) needs
    `reference_source`; a trap whose source equals the (unparsed) reference is left out.
    """
    outputs = _reference_outputs(reference_outcomes)
    lists = _list_arguments(inputs, arg_names)
    pairs = _constant_traps(outputs, arg_names) + _per_item_traps(outputs, lists)
    traps = [Trap(kind, _function_source(function_name, arg_names, e)) for kind, e in pairs]
    if reference_source is None:
        return traps
    if lists:
        cut = _truncated(reference_source, function_name, lists[0], prefix)
        traps.append(Trap("truncated-prefix", cut))
    reference = ast.unparse(ast.parse(reference_source))
    return [trap for trap in traps if trap.source != reference]


# --- assessment ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adequacy:
    """How well a case's verifier inputs reject mutants and traps of its reference."""

    case_id: str
    family: str
    inputs: int
    distinct_outputs: int
    top_output_share: float
    mutants: int
    equivalent: int
    killed: int
    survivors: tuple[str, ...]
    kill_rate: float
    traps_passed: tuple[str, ...]
    hit_share: float | None


def _output_key(reference: Outcomes, index: int) -> str:
    if reference.ok(index):
        return _canonical_json(reference.output(index))
    return reference.outcomes[index] if index < len(reference.outcomes) else "missing"


def _output_spread(reference: Outcomes, count: int) -> tuple[int, float]:
    """(distinct outputs, share of the inputs on which the most common output occurs)."""
    if count == 0:
        return 0, 0.0
    counts = Counter(_output_key(reference, i) for i in range(count))
    return len(counts), counts.most_common(1)[0][1] / count


def _hit_share(
    reference: Outcomes,
    inputs: Sequence[list[Json]],
    hit: Callable[[list[Json], Json], bool] | None,
) -> float | None:
    if hit is None:
        return None
    pairs = [(args, reference.output(i)) for i, args in enumerate(inputs) if reference.ok(i)]
    return sum(1 for args, out in pairs if hit(args, out)) / len(pairs) if pairs else 0.0


def _budget(reference_seconds: float, scale: float = 1.0) -> float:
    return max(MIN_MUTANT_BUDGET_S, MUTANT_BUDGET_FACTOR * reference_seconds * scale)


def _survivors_of_sample(
    reference_source: str,
    function_name: str,
    candidates: list[str],
    sample: list[list[Json]],
    budget: float,
) -> list[bool]:
    """Per candidate, whether the equivalence sample tells it from the reference."""
    if not candidates or not sample:
        return [False] * len(candidates)
    results = run_sources(
        [reference_source, *candidates],
        function_name,
        sample,
        timeout_s=budget,
        reference_timeout_s=REFERENCE_TIMEOUT_S,
    )
    return [result.differs for result in results[1:]]


def assess(
    case_id: str,
    family: str,
    reference_source: str,
    function_name: str,
    arg_names: list[str],
    verifier_inputs: list[list[Json]],
    equivalence_inputs: list[list[Json]],
    *,
    hit: Callable[[list[Json], Json], bool] | None = None,
    prefix: int = 30,
) -> Adequacy:
    """Mutants and traps of the reference against the verifier inputs (see the module doc).

    Three worker runs: the reference alone (its outputs seed the traps, its time sets every other
    source's budget: max(0.25 s, 10x)); the reference, mutants and traps on the verifier inputs;
    the reference and the mutants no verifier input rejected on the equivalence sample.
    """
    reference = run_sources(
        [reference_source], function_name, verifier_inputs, timeout_s=REFERENCE_TIMEOUT_S
    )[0]
    found = make_mutants(reference_source, function_name)
    traps = generic_traps(
        reference,
        verifier_inputs,
        function_name,
        arg_names,
        reference_source=reference_source,
        prefix=prefix,
    )
    results = run_sources(
        [reference_source, *(m.source for m in found), *(t.source for t in traps)],
        function_name,
        verifier_inputs,
        timeout_s=_budget(reference.seconds),
        reference_timeout_s=REFERENCE_TIMEOUT_S,
    )
    mutant_results, trap_results = results[1 : 1 + len(found)], results[1 + len(found) :]
    unkilled = [m for m, r in zip(found, mutant_results, strict=True) if not r.differs]
    scale = len(equivalence_inputs) / max(1, len(verifier_inputs))
    told = _survivors_of_sample(
        reference_source,
        function_name,
        [m.source for m in unkilled],
        equivalence_inputs,
        _budget(reference.seconds, max(1.0, scale)),
    )
    survivors = tuple(m.id for m, differs in zip(unkilled, told, strict=True) if differs)
    equivalent = len(unkilled) - len(survivors)
    killed = len(found) - len(unkilled)
    distinct, top_share = _output_spread(reference, len(verifier_inputs))
    return Adequacy(
        case_id=case_id,
        family=family,
        inputs=len(verifier_inputs),
        distinct_outputs=distinct,
        top_output_share=top_share,
        mutants=len(found),
        equivalent=equivalent,
        killed=killed,
        survivors=survivors,
        kill_rate=killed / (len(found) - equivalent) if len(found) > equivalent else 1.0,
        traps_passed=tuple(
            t.kind for t, r in zip(traps, trap_results, strict=True) if not r.differs
        ),
        hit_share=_hit_share(reference, verifier_inputs, hit),
    )
