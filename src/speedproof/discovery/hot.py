"""What discovery hands on: the target's hottest functions, each with its source and lines.

A `HotFunction` is one definition in the target's own code (a top-level function or a method;
closures, generator expressions and nested functions count towards the definition that holds
them, because that is the unit a proposer can replace). A `Profile` is the ranked list plus how
it was obtained: the profiler, the unit its figures count, the workloads it ran and how many
times each was repeated to gather enough samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from speedproof.ground.errors import InfrastructureError


class DiscoveryError(InfrastructureError):
    """The baseline could not be profiled: a workload failed, a profile is missing or unreadable."""


@dataclass(frozen=True)
class HotFunction:
    name: str
    file: str
    start_line: int
    end_line: int
    # Percentages of `Profile.total`: self is what the function's own body costs, the library
    # and runtime code it calls included (see docs/adr/0022-discovery-profilers.md); cum adds
    # the target's own functions it calls.
    self_pct: float
    cum_pct: float
    # Go: CPU samples credited to the function as self; Python: calls (cProfile counts every
    # call). `Profile.unit` says which.
    samples: int
    source: str

    def view(self, *, with_source: bool) -> dict[str, Any]:
        """The HotFunctionView a role sees; the coordinator gets it without the source."""
        found: dict[str, Any] = {
            "name": self.name,
            "file": self.file,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "self_pct": round(self.self_pct, 2),
            "cum_pct": round(self.cum_pct, 2),
        }
        if with_source:
            found["source"] = self.source
        return found


@dataclass(frozen=True)
class Profile:
    # Hottest first: by self share, ties by cumulative share, then by name.
    functions: tuple[HotFunction, ...]
    # "pprof" (Go CPU samples at 100 Hz) or "cProfile" (Python, deterministic).
    profiler: str
    # What `HotFunction.samples` counts: "samples" (pprof) or "calls" (cProfile).
    unit: str
    # The whole profile the percentages are shares of: CPU samples (pprof) or profiled
    # seconds (cProfile), the target's own code and everything else it ran.
    total: float
    workloads: tuple[str, ...]
    # Workload id -> how many runs went into the profile (1: the workload ran once).
    amplified: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def views(self, *, with_source: bool) -> list[dict[str, Any]]:
        return [f.view(with_source=with_source) for f in self.functions]
