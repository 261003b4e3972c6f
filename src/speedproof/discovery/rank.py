"""Credited figures per definition, turned into the ranked list of hot functions.

Both profilers end here: each credits self and cumulative amounts (samples or seconds) and a
count (samples or calls) to `SourceFunction`s of the target's own code; ranking is the same for
both. Hottest first by self share, ties by cumulative share, then by name so that two runs of
discovery on the same profile hand on the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from speedproof.discovery.hot import HotFunction
from speedproof.source.function import SourceFunction

# Shares this small are rounding noise in either profiler (less than one sample in 10 000 or
# 0.1 ms in a 1 s profile) and carry no information for a proposer.
_NEGLIGIBLE_PCT = 0.01


@dataclass
class Tally:
    self_amount: float = 0.0
    cum_amount: float = 0.0
    count: int = 0


class Tallies:
    """Amounts credited to definitions, plus what could not be credited to any of them."""

    def __init__(self) -> None:
        self.by_definition: dict[SourceFunction, Tally] = {}
        # Own code outside any function (module bodies, package-level initialisers).
        self.outside_functions = 0.0

    def of(self, definition: SourceFunction) -> Tally:
        return self.by_definition.setdefault(definition, Tally())

    def add_self(self, definition: SourceFunction, amount: float) -> None:
        self.of(definition).self_amount += amount

    def add_cum(self, definitions: Iterable[SourceFunction], amount: float) -> None:
        for definition in set(definitions):
            self.of(definition).cum_amount += amount

    def credited(self) -> float:
        return sum(t.self_amount for t in self.by_definition.values())


def rank(
    tallies: Mapping[SourceFunction, Tally], total: float, top: int
) -> tuple[HotFunction, ...]:
    """The `top` hottest definitions as `HotFunction`s, shares in percent of `total`."""
    if total <= 0:
        return ()
    found = [
        HotFunction(
            name=d.name,
            file=d.file,
            start_line=d.start_line,
            end_line=d.end_line,
            self_pct=100.0 * t.self_amount / total,
            # Never below self: the Python split of library time above one call level is
            # proportional, and may round a function's self a hair past its cumulative time.
            cum_pct=100.0 * max(t.cum_amount, t.self_amount) / total,
            samples=t.count,
            source=d.source,
        )
        for d, t in tallies.items()
    ]
    found = [f for f in found if max(f.self_pct, f.cum_pct) >= _NEGLIGIBLE_PCT]
    found.sort(key=lambda f: (-f.self_pct, -f.cum_pct, f.name, f.file))
    return tuple(found[:top])


def coverage_note(tallies: Tallies, total: float, what: str) -> str:
    """How much of the profile the target's functions account for, in words."""
    if total <= 0:
        return f"the profile holds no {what}"
    credited = 100.0 * tallies.credited() / total
    outside = 100.0 * tallies.outside_functions / total
    rest = max(0.0, 100.0 - credited - outside)
    return (
        f"{credited:.1f}% of the profile's {what} are credited to the target's functions, "
        f"{outside:.1f}% to its code outside any function (module bodies, initialisers), "
        f"{rest:.1f}% to code with no caller in the target (interpreter or runtime start-up, "
        "garbage collection, the profiler's own frames)"
    )
