"""cProfile statistics credited to the target's own functions.

cProfile records, per code object, its own time (`tottime`), its cumulative time and, per caller,
the same figures for the calls that caller made. A function's self share here is its own time
*plus* the time of the library and built-in code it calls directly or through other library
code: `words()` pays for the `re.findall` it calls, which no proposer can edit but whose cost
`words()` decides. Time of a library function is split over its callers by the per-caller time
cProfile recorded for it (exact for one level); above one level the split follows each caller's
share of the library function's cumulative time (the profile keeps no whole stacks, so this is
the best it allows). Time that reaches no caller in the target (interpreter start-up, runpy, the
profiler's own frames) is credited to nobody.

A function's cumulative share is cProfile's cumulative time of the calls made to it from outside
its own unit, so a recursive function or a generator it defines is not counted twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from speedproof.discovery.python_source import PythonSources
from speedproof.discovery.rank import Tallies
from speedproof.source.function import SourceFunction

# pstats' keys and records: (file, first line, name) and (primitive calls, calls, tottime,
# cumtime, {caller key: (primitive calls, calls, tottime, cumtime)}).
Key = tuple[str, int, str]
Edge = tuple[int, int, float, float]
Entry = tuple[int, int, float, float, dict[Key, Edge]]
# Where an amount goes: a unit, or None for the target's code outside any function.
Owner = SourceFunction | None


class Crediting:
    def __init__(self, stats: Mapping[Key, Entry], sources: PythonSources) -> None:
        self.stats = stats
        self.sources = sources
        self._shares: dict[Key, dict[Owner, float]] = {}
        self._visiting: set[Key] = set()

    def own(self, key: Key) -> bool:
        return self.sources.is_own(key[0])

    def owner(self, key: Key) -> Owner:
        if key[2] == "<module>":
            return None
        return self.sources.unit_at(key[0], key[1])

    def credit(self) -> Tallies:
        tallies = Tallies()
        for key, entry in self.stats.items():
            if self.own(key):
                self._credit_own(tallies, key, entry)
            else:
                self._credit_library(tallies, entry)
        return tallies

    def _credit_own(self, tallies: Tallies, key: Key, entry: Entry) -> None:
        _, calls, own_time, cumulative, callers = entry
        unit = self.owner(key)
        if unit is None:
            tallies.outside_functions += own_time
            return
        tallies.add_self(unit, own_time)
        if key[2] == unit.name.rsplit(".", 1)[-1]:
            tallies.of(unit).count += calls
        if not callers:
            tallies.add_cum([unit], cumulative)
            return
        from_outside = sum(e[3] for c, e in callers.items() if not self._inside(c, unit))
        tallies.add_cum([unit], from_outside)

    def _inside(self, caller: Key, unit: SourceFunction) -> bool:
        return self.own(caller) and self.owner(caller) == unit

    def _credit_library(self, tallies: Tallies, entry: Entry) -> None:
        for caller, edge in entry[4].items():
            for owner, fraction in self._nearest(caller).items():
                amount = edge[2] * fraction
                if owner is None:
                    tallies.outside_functions += amount
                else:
                    tallies.add_self(owner, amount)

    def _nearest(self, key: Key) -> dict[Owner, float]:
        """How a call made by `key` divides among the target's nearest callers (fractions)."""
        if self.own(key):
            return {self.owner(key): 1.0}
        if key in self._shares:
            return self._shares[key]
        if key in self._visiting or key not in self.stats:
            return {}  # a cycle among library functions, or a caller cProfile did not record
        self._visiting.add(key)
        callers = self.stats[key][4]
        weights = {c: e[3] for c, e in callers.items()}
        if sum(weights.values()) <= 0:
            weights = {c: float(e[1]) for c, e in callers.items()}
        whole = sum(weights.values())
        shares: dict[Owner, float] = defaultdict(float)
        for caller, weight in weights.items():
            if whole <= 0:
                break
            for owner, fraction in self._nearest(caller).items():
                shares[owner] += fraction * weight / whole
        self._visiting.discard(key)
        self._shares[key] = dict(shares)
        return self._shares[key]
