"""What the static detectors and the vetoes read out of a function, in either language.

An I/O site is a call that reads or writes something, with where it goes: a `real` file, stream
or terminal (one system call per call unless something buffers it), a `buffered` wrapper of
one (Python's `open()` by default, Go's bufio), `memory` (StringIO, bytes.Buffer,
strings.Builder), or `unknown` when the function alone does not say (an `io.Writer` parameter,
a field of a type defined elsewhere). A growth is a collection that gets bigger inside a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Destination = Literal["real", "buffered", "memory", "unknown"]


@dataclass(frozen=True)
class IoSite:
    call: str  # the call as written, e.g. "e.w.WriteByte(b)"
    target: str  # what it reads or writes, e.g. "e.w" or "stdout"
    destination: Destination
    why: str  # how the destination was told, e.g. "field w is *bytes.Buffer"
    in_loop: bool
    line: int


@dataclass(frozen=True)
class Growth:
    name: str  # the collection
    how: str  # e.g. "out.append(x)" or "m[k] = v"
    line: int


@dataclass(frozen=True)
class Evidence:
    """One structural reason for a "yes", and how strongly it points there (0..1]."""

    text: str
    weight: float = 1.0


def at(line: int) -> str:
    return f"line {line}"
