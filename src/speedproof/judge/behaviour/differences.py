"""How one run differs from the reference, in words: the exit code, and the first differing line
of each stream and output file, cut around where the two lines part."""

from __future__ import annotations

from collections.abc import Callable

from speedproof.judge.behaviour.fingerprints import Fingerprint, Observation
from speedproof.judge.behaviour.outputs import FileKind, OutputDigest

Labels = tuple[str, str]

# Each side of a "first differing line" excerpt is cut to this many characters, centred on where
# the two lines part, so a 5 000-character JSON line still shows the changed field.
EXCERPT_CHARS = 100
_LEAD = 30
_DIGEST_SHOWN = 12
CANDIDATE_LABELS: Labels = ("baseline", "candidate")


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
    labels: Labels = CANDIDATE_LABELS,
) -> tuple[str, ...]:
    """Every way `other` differs from `reference`, by digest (no content); empty if it matches."""
    return _differences(reference, other, lambda _: (None, None), expected_exit, labels)


def describe_differences(
    reference: Observation,
    other: Observation,
    *,
    expected_exit: int | None = None,
    labels: Labels = CANDIDATE_LABELS,
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
