"""What the static detectors and the vetoes read out of a function, in either language.

An I/O site is a call that reads or writes something, with where it goes: a `real` file, stream
or terminal (one system call per call unless something buffers it), a `buffered` wrapper of
one (Python's `open()` by default, Go's bufio), `memory` (StringIO, bytes.Buffer,
strings.Builder), or `unknown` when the function alone does not say (an `io.Writer` parameter,
a field of a type defined elsewhere). A growth is a collection that gets bigger inside a loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Destination = Literal["real", "buffered", "memory", "unknown"]
N = TypeVar("N")  # the syntax node type of a language: libcst's or tree-sitter's


@dataclass(frozen=True)
class Loop(Generic[N]):
    node: N
    kind: str  # Python: "for", "while", "comprehension"; Go: "range", "clause", "forever"
    iterable: str  # the text iterated over, or a Go loop's condition ("" for a Python while)
    bounded: bool  # a fixed number of rounds: range(CONSTANT), a literal, i < CONSTANT
    line: int
    depth: int  # loops around this one in the function


@dataclass(frozen=True)
class Site(Generic[N]):
    """A node of interest, the loops it runs in (outermost first) and its line in the file."""

    node: N
    text: str
    loops: tuple[Loop[N], ...]
    line: int

    @property
    def in_loop(self) -> bool:
        return bool(self.loops)


@dataclass(frozen=True)
class Call(Site[N]):
    name: str = ""  # the dotted callee ("re.compile", "e.w.WriteByte"), "" when computed

    @property
    def method(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def receiver(self) -> str:
        return self.name.rsplit(".", 1)[0] if "." in self.name else ""


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


def nested_loops(loops: Sequence[Loop[N]]) -> list[Evidence]:
    """A loop of unbounded rounds inside another loop: the superlinear shape in either language."""
    return [
        Evidence(
            f"a loop over {loop.iterable[:40] or 'a condition'} runs inside another loop "
            f"({at(loop.line)})"
        )
        for loop in loops
        if loop.depth > 0 and not loop.bounded
    ]
