"""What init says at the end: the first run's figures for the manifest's comments, and the one
list of what it could not derive."""

from __future__ import annotations

from collections.abc import Sequence

from speedproof.init.derive import Derived
from speedproof.init.first_run import FirstRun
from speedproof.init.length import GUESS_BELOW_PAIRS, spread_words
from speedproof.init.write import TimingNotes


def timing_notes(first: FirstRun) -> TimingNotes | None:
    """One comment line a timed workload, then what the spread is worth and what the judge does."""
    timed = [t for t in first.workloads if t.median_ms is not None]
    if not timed:
        return None
    lines = []
    for timing in timed:
        said = f"{timing.id} ({timing.tier}): median {timing.median_ms:.0f} ms"
        if timing.startup_share is not None:
            said += f", start-up {timing.startup_share * 100:.0f}% of it"
        if timing.spread_pct is not None:
            said += f", robust spread {spread_words(timing.spread_pct, timing.pairs)}"
        lines.append(said + f": {timing.status}.")
    last = max((t.judge_pairs or 0 for t in timed), default=0)
    lines.append(
        f"A spread from fewer than {GUESS_BELOW_PAIRS} pairs is a guess: five pairs read 0.4% "
        "where the judge then measured 7.6% a pair. The judge does not use it: it measures its "
        f"own noise on every judgement, pair by pair up to its last look ({last} pairs here), and "
        "a win inside that noise ends inconclusive, never accepted. `speedproof calibrate` "
        "measures it ahead of time."
    )
    return TimingNotes(first.sandbox, tuple(lines))


def could_not_derive(derived: Derived, dropped: Sequence[str], bench: Sequence[str]) -> list[str]:
    """Everything init left to the user, one line each, with how to add it: from deriving, the
    derived workloads the first run dropped, and the benchmark manifest."""
    return [*derived.missing, *dropped, *bench]
