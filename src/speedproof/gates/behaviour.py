"""The behaviour gate: does the candidate do what the baseline does, on every workload?

For each workload (every tier) the baseline runs twice against itself first:

- the two runs agree → the workload is compared `exact`ly: exit code, stdout digest, stderr
  digest (unless `compare_stderr = false`) and a digest of every declared output file, each
  stream after the manifest's `normalise` rules;
- they differ, but agree once the lines of stdout and stderr are sorted → the workload is
  compared as `sorted-lines` from then on, and the result says so (a program that prints a map
  or a set, or joins goroutines, is deterministic in content and not in order);
- they still differ → the workload is `nondeterministic`. That is an infrastructure problem of
  the target, not a failure of the candidate: the candidate is not run on it, and the result asks
  for a normalise rule. A baseline that times out or misses its `expected_exit` is
  `baseline-failed`, also an infrastructure problem.

Then the candidate runs once and is compared with the reference (the first baseline run). The
reference is kept, with its normalised content, so that the timed lane can check every later
repetition against it (`ReferenceCheck`): determinism is asserted on every run, not assumed from
two. Output files are removed before each run, so a stale file never matches. In the sandbox
the tree is read-only and each declared output file is a per-run copy outside it, bound over an
empty placeholder (`speedproof.program.output_path`); a copy the run never wrote reads as absent.

Output files are not sorted in `sorted-lines` mode and not normalised: a file is an artefact a
user reads back, and a reordered file is a different file.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Literal

from speedproof.errors import InfrastructureError
from speedproof.evidence import TWIN_SUFFIX
from speedproof.invocation import Invocation
from speedproof.manifest import Behaviour, Normalise, Workload
from speedproof.measure.process import _KEEP_LIMIT, ProcessResult
from speedproof.measure.runner import run_invocation
from speedproof.program import Program, output_path
from speedproof.sandbox import Sandbox

Mode = Literal["exact", "sorted-lines"]
Status = Literal["match", "differs", "nondeterministic", "baseline-failed"]
Stream = Literal["stdout", "stderr"]
FileKind = Literal["file", "absent", "other"]
Labels = tuple[str, str]

# Each side of a "first differing line" excerpt is cut to this many characters, centred on where
# the two lines part, so a 5 000-character JSON line still shows the changed field.
EXCERPT_CHARS = 100
_LEAD = 30
# How much normalised content a reference keeps for describing a difference in words. Digests
# cover everything; beyond this a difference is reported by digest only. Four MiB per stream
# bounds a reference's memory while covering every workload output a person would read.
KEPT_BYTES = 4 * 1024 * 1024
_CHUNK = 1024 * 1024
_DIGEST_SHOWN = 12
_CANDIDATE: Labels = ("baseline", "candidate")
_SELF: Labels = ("first baseline run", "second baseline run")
_REPEAT: Labels = ("reference", "this baseline run")
_HINT = (
    "add a [[behaviour.normalise]] rule for the part that changes (a timestamp, a duration, "
    "an address), or set compare_stderr = false if only stderr changes"
)


@dataclass(frozen=True)
class OutputDigest:
    path: str
    kind: FileKind
    sha256: str | None


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


@dataclass(frozen=True)
class OutputFile:
    """One declared output file as read right after a run: its digest and its first bytes."""

    digest: OutputDigest
    content: bytes = field(repr=False)


# ---------------------------------------------------------------------------------------------
# Normalising and fingerprinting


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


# ---------------------------------------------------------------------------------------------
# Output files


def _output_path(root: Path, relative: str) -> Path:
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise InfrastructureError(
            f"output file {relative!r} must be a relative path inside the target folder"
        )
    return root / pure


def _inside(root: Path, path: Path) -> bool:
    """True when the folder holding `path` is inside `root` once symlinks are followed."""
    return path.parent.resolve().is_relative_to(root.resolve())


def _digest_file(path: Path) -> tuple[str, bytes]:
    digest = hashlib.sha256()
    kept = bytearray()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            if len(kept) < KEPT_BYTES:
                kept.extend(chunk[: KEPT_BYTES - len(kept)])
    return digest.hexdigest(), bytes(kept)


def read_output(root: Path, relative: str) -> OutputFile:
    """Digest one output file without following a symlink; anything but a regular file inside
    the target folder is kind "other", which never matches a regular file."""
    path = _output_path(root, relative)
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    except OSError:
        return OutputFile(OutputDigest(relative, "other", None), b"")
    if not stat.S_ISREG(mode) or not _inside(root, path):
        return OutputFile(OutputDigest(relative, "other", None), b"")
    return _read_file(path, relative)


def _read_file(path: Path, relative: str) -> OutputFile:
    try:
        sha, kept = _digest_file(path)
    except OSError as exc:
        raise InfrastructureError(f"cannot read output file {path}: {exc.strerror}") from exc
    return OutputFile(OutputDigest(relative, "file", sha), kept)


def _read_copy(program: Program, relative: str) -> OutputFile:
    """A run's own copy of an output file; one still as `_reset_copy` left it is absent."""
    path = output_path(program, relative)
    try:
        info = path.stat()
    except FileNotFoundError:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    if info.st_size == 0 and info.st_mtime_ns == 0:
        return OutputFile(OutputDigest(relative, "absent", None), b"")
    return _read_file(path, relative)


def read_outputs(program: Program, relatives: Sequence[str]) -> tuple[OutputFile, ...]:
    if program.outputs is not None:
        return tuple(_read_copy(program, relative) for relative in relatives)
    return tuple(read_output(program.root, relative) for relative in relatives)


def place_outputs(program: Program) -> None:
    """Empty placeholders in the tree for a sandboxed program's declared output files.

    bubblewrap binds a file only over a path that exists, and the tree is read-only inside;
    the judge makes them once, before it takes the tree's snapshot.
    """
    if program.outputs is None:
        return
    program.outputs.mkdir(parents=True, exist_ok=True)
    for relative in program.output_files:
        path = _output_path(program.root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(program.root, path):
            raise InfrastructureError(f"output file {relative!r} resolves outside {program.root}")
        if not path.is_file() or path.is_symlink():
            path.unlink(missing_ok=True)
            path.touch()
        _reset_copy(output_path(program, relative))


def _reset_copy(path: Path) -> None:
    # An empty file stamped with the epoch: any write, even an empty truncating one, moves
    # its modification time, so a run that wrote nothing is told from one that wrote "".
    path.unlink(missing_ok=True)
    path.touch()
    os.utime(path, ns=(0, 0))


def clear_outputs(program: Program, relatives: Sequence[str]) -> None:
    """Empty every declared output file before a run, so a stale one can never match."""
    if program.outputs is not None:
        for relative in relatives:
            _reset_copy(output_path(program, relative))
        return
    root = program.root
    for relative in relatives:
        path = _output_path(root, relative)
        if not path.is_symlink() and not path.exists():
            continue
        if not _inside(root, path):
            raise InfrastructureError(
                f"refusing to remove output file {path}: its folder resolves outside {root}"
            )
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            raise InfrastructureError(f"cannot remove output file {path}: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# Differences in words


def _short(sha256: str | None) -> str:
    return "none" if sha256 is None else sha256[:_DIGEST_SHOWN]


def _common_prefix(a: str, b: str) -> int:
    index = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        index += 1
    return index


def _excerpt(line: bytes | None, other: bytes | None) -> str:
    """One side of a differing line, cut to EXCERPT_CHARS around where it parts from the other."""
    if line is None:
        return "(no such line)"
    text = line.decode("utf-8", errors="replace")
    start = 0
    if len(text) > EXCERPT_CHARS:
        parted = _common_prefix(text, (other or b"").decode("utf-8", errors="replace"))
        start = max(0, min(parted - _LEAD, len(text) - EXCERPT_CHARS))
    shown = text[start : start + EXCERPT_CHARS]
    return ("…" if start else "") + repr(shown) + ("…" if start + EXCERPT_CHARS < len(text) else "")


def _first_differing_line(a: bytes, b: bytes) -> tuple[int, bytes | None, bytes | None] | None:
    left, right = a.split(b"\n"), b.split(b"\n")
    for index in range(max(len(left), len(right))):
        x = left[index] if index < len(left) else None
        y = right[index] if index < len(right) else None
        if x != y:
            return index + 1, x, y
    return None


def _content_difference(
    name: str,
    a: bytes | None,
    b: bytes | None,
    digests: tuple[str | None, str | None],
    labels: Labels,
) -> str:
    shas = f"sha256 {_short(digests[0])} vs {_short(digests[1])}"
    if a is None or b is None:
        return f"{name} differs ({shas})"
    if a + b"\n" == b or b + b"\n" == a:
        ends = labels[0] if a.endswith(b"\n") else labels[1]
        return f"{name} differs only in the final newline, which the {ends} has"
    found = _first_differing_line(a, b)
    if found is None:
        return f"{name} differs after its first {len(a)} bytes ({shas})"
    number, x, y = found
    sides = f"{labels[0]} {_excerpt(x, y)} {labels[1]} {_excerpt(y, x)}"
    return f"{name} differs at line {number}: {sides}"


def _exit_difference(
    reference: int, other: int, expected: int | None, labels: Labels
) -> str | None:
    if reference == other and (expected is None or other == expected):
        return None
    wanted = "" if expected is None else f" (expected {expected})"
    return f"exit code differs: {labels[0]} {reference} {labels[1]} {other}{wanted}"


def _file_difference(
    ref: OutputDigest, other: OutputDigest, contents: tuple[bytes, bytes] | None, labels: Labels
) -> str:
    name = f"output file {ref.path}"
    if ref.kind != other.kind:
        return f"{name}: {labels[0]} {_kind_words(ref.kind)}, {labels[1]} {_kind_words(other.kind)}"
    a, b = contents if contents is not None else (None, None)
    return _content_difference(name, a, b, (ref.sha256, other.sha256), labels)


def _kind_words(kind: FileKind) -> str:
    return {"file": "wrote it", "absent": "did not write it", "other": "left a non-file there"}[
        kind
    ]


def _differences(
    reference: Fingerprint,
    other: Fingerprint,
    contents: Callable[[str], tuple[bytes | None, bytes | None]],
    expected_exit: int | None,
    labels: Labels,
) -> tuple[str, ...]:
    if reference.mode != other.mode:
        raise ValueError(f"cannot compare a {reference.mode} fingerprint with a {other.mode} one")
    found: list[str] = []
    exit_words = _exit_difference(reference.exit_code, other.exit_code, expected_exit, labels)
    if exit_words:
        found.append(exit_words)
    streams: list[tuple[str, str | None, str | None]] = []
    if reference.stdout_sha256 is not None:
        streams.append(("stdout", reference.stdout_sha256, other.stdout_sha256))
    if reference.stderr_sha256 is not None:
        streams.append(("stderr", reference.stderr_sha256, other.stderr_sha256))
    for name, a_sha, b_sha in streams:
        if a_sha != b_sha:
            a, b = contents(name)
            found.append(_content_difference(name, a, b, (a_sha, b_sha), labels))
    for ref_file, other_file in zip(reference.files, other.files, strict=True):
        if ref_file != other_file:
            a, b = contents(f"file:{ref_file.path}")
            pair = None if a is None or b is None else (a, b)
            found.append(_file_difference(ref_file, other_file, pair, labels))
    return tuple(found)


def compare_fingerprints(
    reference: Fingerprint,
    other: Fingerprint,
    *,
    expected_exit: int | None = None,
    labels: Labels = _CANDIDATE,
) -> tuple[str, ...]:
    """Every way `other` differs from `reference`, by digest (no content); empty if it matches."""
    return _differences(reference, other, lambda _: (None, None), expected_exit, labels)


def describe_differences(
    reference: Observation,
    other: Observation,
    *,
    expected_exit: int | None = None,
    labels: Labels = _CANDIDATE,
) -> tuple[str, ...]:
    """Every way `other` differs from `reference`, with the first differing line of each."""
    paths = [digest.path for digest in reference.fingerprint.files]

    def contents(name: str) -> tuple[bytes | None, bytes | None]:
        if name == "stdout":
            return reference.stdout, other.stdout
        if name == "stderr":
            return reference.stderr, other.stderr
        index = paths.index(name.removeprefix("file:"))
        return reference.files[index], other.files[index]

    return _differences(reference.fingerprint, other.fingerprint, contents, expected_exit, labels)


# ---------------------------------------------------------------------------------------------
# Checking every repetition


@dataclass(frozen=True)
class ReferenceCheck:
    """The timed lane's `RepetitionCheck`: each run must reproduce the gate's reference."""

    reference: Observation
    behaviour: Behaviour

    def prepare(self, invocation: Invocation) -> None:
        clear_outputs(invocation.program, self.behaviour.output_files)

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]:
        outputs = read_outputs(invocation.program, self.behaviour.output_files)
        seen = observe(result, outputs, self.behaviour, self.reference.fingerprint.mode)
        if seen.fingerprint == self.reference.fingerprint:
            return ()
        labels = _CANDIDATE if invocation.program.side == "candidate" else _REPEAT
        return describe_differences(
            self.reference, seen, expected_exit=invocation.workload.expected_exit, labels=labels
        )


# ---------------------------------------------------------------------------------------------
# The gate


@dataclass(frozen=True)
class WorkloadBehaviour:
    workload: Workload
    # For a nondeterministic workload, the last mode tried: sorted-lines.
    mode: Mode
    status: Status
    # Candidate differences for "differs"; what went wrong with the baseline otherwise.
    differences: tuple[str, ...]
    baseline_reference: Fingerprint
    candidate: Fingerprint | None
    # Facts worth a line in the ledger, e.g. the switch to sorted-lines and why.
    notes: tuple[str, ...] = ()
    reference: Observation | None = field(default=None, repr=False, compare=False)

    @property
    def matches(self) -> bool:
        return self.status == "match"

    @property
    def infrastructure(self) -> bool:
        """True when the workload could not judge the candidate: the baseline is at fault."""
        return self.status in ("nondeterministic", "baseline-failed")

    def describe(self) -> str:
        head = f"{self.workload.id} ({self.mode}): {self.status}"
        return "; ".join([head, *self.notes, *self.differences])


@dataclass(frozen=True)
class BehaviourResult:
    workloads: tuple[WorkloadBehaviour, ...]
    behaviour: Behaviour

    @property
    def status(self) -> Literal["match", "differs", "infrastructure"]:
        """A candidate difference on any workload outranks a baseline problem on another."""
        if any(w.status == "differs" for w in self.workloads):
            return "differs"
        if any(w.infrastructure for w in self.workloads):
            return "infrastructure"
        return "match"

    @property
    def matches(self) -> bool:
        return self.status == "match"

    def candidate_differences(self) -> tuple[str, ...]:
        return tuple(
            f"{w.workload.id}: {text}"
            for w in self.workloads
            if w.status == "differs"
            for text in w.differences
        )

    def infrastructure_problems(self) -> tuple[str, ...]:
        return tuple(w.describe() for w in self.workloads if w.infrastructure)

    def mode_notes(self) -> tuple[str, ...]:
        """A verdict note for every workload compared as sorted lines, saying why: what was
        compared is not the raw output, and the user reading the verdict must know it."""
        return tuple(
            f"workload {w.workload.id}: {note.rstrip('.')}."
            for w in self.workloads
            if w.mode == "sorted-lines" and not w.infrastructure
            for note in w.notes
        )

    def detail(self) -> tuple[str, ...]:
        """One line a workload, for `Evidence.behaviour_detail` and the ledger."""
        return tuple(w.describe() for w in self.workloads)

    def check_for(self, workload_id: str) -> ReferenceCheck:
        """The reference the timed lane checks every repetition of this workload against."""
        for judged in self.workloads:
            if judged.workload.id != workload_id:
                continue
            if judged.status != "match" or judged.reference is None:
                raise InfrastructureError(
                    f"workload {workload_id!r} did not pass the behaviour gate ({judged.status}); "
                    "it has no reference to measure against"
                )
            return ReferenceCheck(judged.reference, self.behaviour)
        raise InfrastructureError(f"no behaviour reference for workload {workload_id!r}")


@dataclass(frozen=True)
class _Run:
    result: ProcessResult
    outputs: tuple[OutputFile, ...]

    def observe(self, behaviour: Behaviour, mode: Mode) -> Observation:
        return observe(self.result, self.outputs, behaviour, mode)


def _run(invocation: Invocation, behaviour: Behaviour, sandbox: Sandbox, timeout_s: float) -> _Run:
    program = invocation.program
    clear_outputs(program, behaviour.output_files)
    result = run_invocation(invocation, sandbox=sandbox, timeout_s=timeout_s)
    return _Run(result, read_outputs(program, behaviour.output_files))


def _baseline_problem(run: _Run, workload: Workload, timeout_s: float) -> str | None:
    if run.result.timed_out:
        return f"the baseline timed out after {timeout_s:.3g} s"
    if run.result.exit_code != workload.expected_exit:
        tail = run.result.tail(300).strip()
        return (
            f"the baseline exits {run.result.exit_code}, the manifest expects "
            f"{workload.expected_exit}" + (f": {tail}" if tail else "")
        )
    return None


@dataclass(frozen=True)
class _Settled:
    mode: Mode
    reference: Observation
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def _settle_mode(first: _Run, second: _Run, behaviour: Behaviour) -> _Settled:
    """Exact if the baseline reproduces itself, sorted-lines if only the order of lines moves."""
    exact = first.observe(behaviour, "exact")
    again = second.observe(behaviour, "exact")
    if exact.fingerprint == again.fingerprint:
        return _Settled("exact", exact)
    moved = describe_differences(exact, again, labels=_SELF)
    ordered = first.observe(behaviour, "sorted-lines")
    ordered_again = second.observe(behaviour, "sorted-lines")
    if ordered.fingerprint == ordered_again.fingerprint:
        note = (
            "the baseline's output differs between two runs of itself ("
            + "; ".join(moved)
            + ") but not once its lines are sorted, so it is compared as sorted lines"
        )
        return _Settled("sorted-lines", ordered, notes=(note,))
    still = describe_differences(ordered, ordered_again, labels=_SELF)
    problem = "the baseline is nondeterministic even with sorted lines: " + "; ".join(still)
    return _Settled("sorted-lines", ordered, problems=(problem, _HINT))


def _judge_candidate(
    settled: _Settled, run: _Run, workload: Workload, behaviour: Behaviour, timeout_s: float
) -> WorkloadBehaviour:
    reference = settled.reference
    seen = run.observe(behaviour, settled.mode)
    if run.result.timed_out:
        differences: tuple[str, ...] = (f"the candidate timed out after {timeout_s:.3g} s",)
    else:
        differences = describe_differences(reference, seen, expected_exit=workload.expected_exit)
    return WorkloadBehaviour(
        workload=workload,
        mode=settled.mode,
        status="differs" if differences else "match",
        differences=differences,
        baseline_reference=reference.fingerprint,
        candidate=seen.fingerprint,
        notes=settled.notes,
        reference=reference,
    )


def judge_workload(
    baseline: Invocation,
    candidate: Invocation,
    behaviour: Behaviour,
    *,
    sandbox: Sandbox,
    timeout_s: float,
    mode: Mode | None = None,
) -> WorkloadBehaviour:
    """Baseline twice, then the candidate once, on one workload.

    With `mode` (a twin, whose original has settled how its output compares), the baseline
    runs once: its second run would only settle the mode again.
    """
    workload = baseline.workload
    first = _run(baseline, behaviour, sandbox, timeout_s)
    problem = _baseline_problem(first, workload, timeout_s)
    if problem is not None:
        observed = first.observe(behaviour, "exact")
        return WorkloadBehaviour(
            workload, "exact", "baseline-failed", (problem,), observed.fingerprint, None
        )
    if mode is not None:
        settled = _Settled(mode, first.observe(behaviour, mode))
    else:
        settled = _settle_mode(first, _run(baseline, behaviour, sandbox, timeout_s), behaviour)
    if settled.problems:
        return WorkloadBehaviour(
            workload,
            settled.mode,
            "nondeterministic",
            settled.problems,
            settled.reference.fingerprint,
            None,
        )
    ran = _run(candidate, behaviour, sandbox, timeout_s)
    return _judge_candidate(settled, ran, workload, behaviour, timeout_s)


# Behaviour runs side by side: two, one a core of the 2-core machines this is built for.
BEHAVIOUR_WORKERS = 2

# (program, workload) -> the program as it must run that workload.
Visible = Callable[[Program, Workload], Program]


def as_built(program: Program, workload: Workload) -> Program:
    """The default `Visible`: every workload runs the program as it was built."""
    return program


def check_behaviour(
    baseline: Program,
    candidate: Program,
    workloads: Sequence[Workload],
    behaviour: Behaviour,
    *,
    prefix: Sequence[str],
    sandbox: Sandbox,
    timeout_for: Callable[[Workload], float],
    visible: Visible = as_built,
) -> BehaviourResult:
    """Judge the candidate's behaviour on every workload, whatever its tier.

    `visible` gives each side's program the folders one workload's inputs live in (a twin's
    copies, generated inputs, the holdout copy: `speedproof.inputs.unseen`). A twin, which
    comes after its original, is compared in the mode its original settled."""
    settled: dict[str, Mode] = {}
    done: dict[str, WorkloadBehaviour] = {}

    def judge(workload: Workload) -> WorkloadBehaviour:
        return judge_workload(
            Invocation(visible(baseline, workload), workload, tuple(prefix)),
            Invocation(visible(candidate, workload), workload, tuple(prefix)),
            behaviour,
            sandbox=sandbox,
            timeout_s=timeout_for(workload),
            mode=settled.get(workload.id.removesuffix(TWIN_SUFFIX))
            if workload.id.endswith(TWIN_SUFFIX)
            else None,
        )

    # Two workloads at a time: nothing here is timed (a timeout is a limit, not a reading), and
    # on logstat's 4 workloads and their twins this halves the stage. Twins run after every
    # original, because each is compared in the mode its original settled.
    originals = [w for w in workloads if not w.id.endswith(TWIN_SUFFIX)]
    twins = [w for w in workloads if w.id.endswith(TWIN_SUFFIX)]
    with ThreadPoolExecutor(max_workers=BEHAVIOUR_WORKERS) as pool:
        for group in (originals, twins):
            for workload, result in zip(group, pool.map(judge, group), strict=True):
                done[workload.id] = result
                if result.matches:
                    settled[workload.id] = result.mode
    return BehaviourResult(tuple(done[w.id] for w in workloads), behaviour)
