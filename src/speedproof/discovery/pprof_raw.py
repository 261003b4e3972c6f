"""Read what `go tool pprof -raw` prints: samples as stacks of (function, file, line) frames.

The text has a `Samples:` section (a header naming the value types, then one line a stack:
values, a colon, location ids leaf first) and a `Locations` section (one line a location: id,
address, mapping, then its frames, an inlined function first and each caller it was inlined into
on the following indented lines). Function names may hold spaces (`go.shape.struct { ... }`), so
a frame is read from its right end: `FUNCTION FILE:LINE[:COLUMN] [s=START]`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from speedproof.discovery.hot import DiscoveryError

_SAMPLE = re.compile(r"^\s*(\d+(?:\s+\d+)*)\s*:\s*(\d+(?:\s+\d+)*)?\s*$")
_LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-fA-F]+(?: M=\d+)?\s?(.*)$")
_FRAME = re.compile(r"^(.+) (\S+?):(\d+)(?::\d+)?(?: s=\d+)?(?: \(inlined\))?\s*$")


@dataclass(frozen=True)
class Frame:
    function: str
    file: str
    line: int


@dataclass
class RawProfile:
    # (samples, location ids leaf first) per stack, and each location's frames, inlined first.
    stacks: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    locations: dict[int, list[Frame]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(count for count, _ in self.stacks)

    def frames(self, ids: tuple[int, ...]) -> list[Frame]:
        """One stack's frames, leaf first, inlined frames in place."""
        return [frame for i in ids for frame in self.locations.get(i, [])]


def _frame(text: str) -> Frame | None:
    found = _FRAME.match(text.strip())
    if found is None:
        return None
    return Frame(found.group(1).strip(), found.group(2), int(found.group(3)))


def _sample_index(header: str) -> int:
    types = header.split()
    for index, kind in enumerate(types):
        if kind.startswith("samples/"):
            return index
    raise DiscoveryError(f"the CPU profile has no sample count among its values: {header!r}")


class _Reader:
    def __init__(self) -> None:
        self.profile = RawProfile()
        self.section = ""
        self.index = -1
        self.current: int | None = None

    def feed(self, line: str) -> None:
        stripped = line.strip()
        if stripped in ("Samples:", "Locations", "Mappings"):
            self.section = stripped
            return
        if self.section == "Samples:":
            self._sample(line)
        elif self.section == "Locations":
            self._location(line)

    def _sample(self, line: str) -> None:
        if self.index < 0:
            if line.strip():
                self.index = _sample_index(line)
            return
        found = _SAMPLE.match(line)
        if found is None:
            return  # a label line under a stack
        values = [int(v) for v in found.group(1).split()]
        ids = tuple(int(i) for i in (found.group(2) or "").split())
        if self.index < len(values):
            self.profile.stacks.append((values[self.index], ids))

    def _location(self, line: str) -> None:
        found = _LOCATION.match(line)
        if found is not None:
            self.current = int(found.group(1))
            self.profile.locations[self.current] = []
            text = found.group(2)
        elif self.current is not None and line.startswith((" ", "\t")):
            text = line
        else:
            return
        frame = _frame(text) if text.strip() else None
        if frame is not None and self.current is not None:
            self.profile.locations[self.current].append(frame)


def parse_raw(text: str) -> RawProfile:
    if "Samples:" not in text.splitlines():
        raise DiscoveryError("`go tool pprof -raw` printed no Samples section")
    reader = _Reader()
    for line in text.splitlines():
        reader.feed(line)
    return reader.profile
