"""A run's behaviour reduced to a fingerprint: exit code and digests of stdout, stderr and each
output file, each stream after the manifest's normalise rules (and sorted in `sorted-lines` mode),
with the content kept beside it for describing a difference in words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import _KEEP_LIMIT, ProcessResult
from speedproof.judge.behaviour.outputs import KEPT_BYTES, OutputDigest, OutputFile, read_outputs
from speedproof.manifest import Behaviour, Normalise

Mode = Literal["exact", "sorted-lines"]
Stream = Literal["stdout", "stderr"]


@dataclass(frozen=True)
class Fingerprint:
    """What a run's behaviour is reduced to; later repetitions must reproduce it exactly."""

    mode: Mode
    exit_code: int
    # None when the manifest says compare_stdout = false (a reported-lane benchmark).
    stdout_sha256: str | None
    # None when the manifest says compare_stderr = false.
    stderr_sha256: str | None
    files: tuple[OutputDigest, ...]


@dataclass(frozen=True)
class Observation:
    """A fingerprint plus the (normalised, possibly sorted) content behind it, for words."""

    fingerprint: Fingerprint
    stdout: bytes = field(repr=False)
    stderr: bytes | None = field(repr=False)
    files: tuple[bytes, ...] = field(repr=False)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _applies(rule: Normalise, stream: Stream) -> bool:
    return rule.stream in (stream, "both")


def normalise(data: bytes, rules: Sequence[Normalise], stream: Stream) -> bytes:
    """Apply the rules for `stream` in manifest order. Bytes that are not UTF-8 survive unchanged
    (surrogateescape), so a binary output is compared byte for byte."""
    chosen = [rule for rule in rules if _applies(rule, stream)]
    if not chosen:
        return data
    text = data.decode("utf-8", errors="surrogateescape")
    for rule in chosen:
        text = _compiled(rule.pattern).sub(rule.replace, text)
    return text.encode("utf-8", errors="surrogateescape")


def sort_lines(data: bytes) -> bytes:
    """The lines in byte order; a final newline stays final, so "b\\na\\n" becomes "a\\nb\\n"."""
    terminated = data.endswith(b"\n")
    body = data[:-1] if terminated else data
    return b"\n".join(sorted(body.split(b"\n"))) + (b"\n" if terminated else b"")


def _canonical_stream(
    data: bytes, raw_sha256: str, rules: Sequence[Normalise], stream: Stream, mode: Mode
) -> tuple[str, bytes]:
    """(digest, kept content) of one stream after normalising and, in sorted mode, sorting."""
    if mode == "exact" and not any(_applies(rule, stream) for rule in rules):
        return raw_sha256, data[:KEPT_BYTES]
    if len(data) >= _KEEP_LIMIT and hashlib.sha256(data).hexdigest() != raw_sha256:
        raise InfrastructureError(
            f"{stream} is larger than {_KEEP_LIMIT >> 20} MiB, and normalise rules or a "
            "sorted-lines comparison need all of it; shorten the workload's output"
        )
    canonical = normalise(data, rules, stream)
    if mode == "sorted-lines":
        canonical = sort_lines(canonical)
    return hashlib.sha256(canonical).hexdigest(), canonical[:KEPT_BYTES]


def observe(
    result: ProcessResult, outputs: Sequence[OutputFile], behaviour: Behaviour, mode: Mode
) -> Observation:
    rules = behaviour.normalise
    stdout_sha: str | None = None
    stdout = b""
    if behaviour.compare_stdout:
        stdout_sha, stdout = _canonical_stream(
            result.stdout, result.stdout_sha256, rules, "stdout", mode
        )
    stderr_sha: str | None = None
    stderr: bytes | None = None
    if behaviour.compare_stderr:
        stderr_sha, stderr = _canonical_stream(
            result.stderr, result.stderr_sha256, rules, "stderr", mode
        )
    fingerprint = Fingerprint(
        mode=mode,
        exit_code=result.exit_code,
        stdout_sha256=stdout_sha,
        stderr_sha256=stderr_sha,
        files=tuple(output.digest for output in outputs),
    )
    return Observation(fingerprint, stdout, stderr, tuple(output.content for output in outputs))


def fingerprint(
    result: ProcessResult, invocation: Invocation, rules: Behaviour, mode: Mode
) -> Fingerprint:
    """The fingerprint of a run that has just finished (its output files are read now)."""
    outputs = read_outputs(invocation.program, rules.output_files)
    return observe(result, outputs, rules, mode).fingerprint
