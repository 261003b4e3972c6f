"""One harness run in the sandbox, and what its outcome means.

`run_harness` builds the job document, runs `harness.py` in the sandbox (optionally under a
wrapper such as Cachegrind) and classifies the outcome. It does not decide who is to blame: the
verifier knows whether the source was the case's reference or a candidate.
"""

from __future__ import annotations

import json
import secrets
import signal
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from speedproof.functions.case import Json
from speedproof.functions.sandbox import Limits, Outcome, SandboxConfig, run_script
from speedproof.functions.subset import ALLOWED_BUILTINS

RunStatus = Literal["ok", "timeout", "resource_limit", "violation", "crash", "harness_error"]
# A fresh secret per run, written into the job and echoed in the harness's document. The harness
# keeps it only in a local of `main`; code that ends the process early and prints a document of
# its own (it would need a way out of the subset first) cannot know it.
_TOKEN_PLACEHOLDER = "0" * 32
Mode = Literal["call", "skip"]
"""`call` runs the function; `skip` does everything else (the calibration run). Equal length on
purpose: beside the source (a stub in a calibration, `measure.calibration_stub`), the two job
documents differ in nothing but this word's letters."""


@dataclass(frozen=True)
class InputResult:
    """The harness's report for one input: canonical JSON of output and arguments, or an error."""

    output: str | None
    arguments: tuple[str, ...] | None
    error: str | None
    error_kind: str | None
    value: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class HarnessRun:
    """A classified sandbox run of the harness."""

    status: RunStatus
    detail: str
    results: tuple[InputResult, ...]
    outcome: Outcome


def harness_source() -> str:
    """The harness script's text, as shipped in the package."""
    return resources.files("speedproof.functions").joinpath("harness.py").read_text("utf-8")


def canonical(value: Json) -> str:
    """Exact JSON text of a value (ADR 0065): 1, 1.0 and true differ, floats by their repr (-0.0
    is not 0.0), dict key order counts (a caller iterating the dict sees it), and a lone
    surrogate is not the astral character a pair of them would encode."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def job_document(
    source: str,
    function_name: str,
    inputs: list[list[Json]],
    *,
    mode: Mode = "call",
    expected: list[list[Json]] | None = None,
    output_cap: int = 4 << 20,
) -> bytes:
    """The JSON job `harness.py` reads."""
    job = {
        "token": _TOKEN_PLACEHOLDER,
        "source": source,
        "function_name": function_name,
        "builtins": sorted(ALLOWED_BUILTINS),
        "inputs": inputs,
        "expected": expected,
        "mode": mode,
        "output_cap": output_cap,
    }
    return json.dumps(job, allow_nan=False, separators=(",", ":")).encode("utf-8")


def run_harness(
    job: bytes,
    *,
    limits: Limits | None = None,
    config: SandboxConfig | None = None,
    wrapper: tuple[str, ...] = (),
) -> HarnessRun:
    """Run the harness on `job` in the sandbox; raises SandboxUnavailable if it cannot start."""
    limits = limits or Limits()
    token = secrets.token_hex(16)
    placeholder = f'"token":"{_TOKEN_PLACEHOLDER}"'.encode()
    if not job.startswith(b"{" + placeholder):
        raise ValueError("job documents come from job_document")
    job = job.replace(placeholder, f'"token":"{token}"'.encode(), 1)
    outcome = run_script(harness_source(), job, limits=limits, config=config, wrapper=wrapper)
    return classify(outcome, limits, token)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} in harness output")


def classify(outcome: Outcome, limits: Limits, token: str) -> HarnessRun:
    """Turn a raw outcome into a status; the per-input results only when the run completed.

    A document without the run's token was not written by the harness: `violation`.
    """
    early = _classify_process(outcome, limits)
    if early is not None:
        return HarnessRun(early[0], early[1], (), outcome)
    try:
        document = json.loads(outcome.stdout, parse_constant=_reject_constant)
    except ValueError as exc:
        return HarnessRun("harness_error", f"unparsable harness output: {exc}", (), outcome)
    if not isinstance(document, dict):
        return HarnessRun("harness_error", "harness output is not an object", (), outcome)
    if document.get("token") != token:
        return HarnessRun("violation", "the result document was not the harness's", (), outcome)
    return _classify_document(document, outcome)


def _classify_process(outcome: Outcome, limits: Limits) -> tuple[RunStatus, str] | None:
    if outcome.timed_out:
        return "timeout", f"wall-clock limit of {limits.wall_seconds:g} s"
    if outcome.capped is not None:
        return "resource_limit", f"{outcome.capped} larger than the cap"
    sig = outcome.signal
    if sig in (signal.SIGKILL, signal.SIGXCPU):
        return "timeout", f"CPU limit of {limits.cpu_seconds} s"
    if sig == signal.SIGXFSZ:
        return "resource_limit", "file size limit"
    if sig is not None:
        return "crash", f"killed by signal {signal.Signals(sig).name}"
    if outcome.exit_code != 0:
        stderr = outcome.stderr.decode("utf-8", "replace")
        if "MemoryError" in stderr:
            return "resource_limit", "memory limit"
        return "harness_error", f"harness exited {outcome.exit_code}: {stderr[-300:]}"
    return None


def _classify_document(document: dict[str, Any], outcome: Outcome) -> HarnessRun:
    if "fatal" in document:
        kind = document.get("kind")
        status: RunStatus = (
            "resource_limit" if kind in ("memory", "output_cap") else "harness_error"
        )
        return HarnessRun(status, str(document["fatal"]), (), outcome)
    violations = document.get("violations") or []
    if violations:
        refused = ", ".join(sorted({str(item) for item in violations}))
        return HarnessRun("violation", f"the sandbox refused: {refused}", (), outcome)
    results = tuple(_input_result(item) for item in document.get("results", []))
    return HarnessRun("ok", "", results, outcome)


def _input_result(item: dict[str, Any]) -> InputResult:
    if "error" in item:
        return InputResult(None, None, str(item["error"]), str(item.get("kind")))
    arguments = tuple(canonical(argument) for argument in item["args"])
    return InputResult(canonical(item["out"]), arguments, None, None, [item["out"], item["args"]])
