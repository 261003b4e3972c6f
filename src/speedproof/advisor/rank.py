"""The order the coordinator is offered hot functions in, computed by code from the advisor's
flags and each function's hotness.

score = self_pct x (0.25 + 0.75 x p), where p is the probability of the function's strongest
standing flag (0 when nothing is flagged or every flag was vetoed). A function's self share
bounds what any rewrite of it can win (Amdahl); p is how likely the advisor thinks a known cause
is there to remove. The 0.25 floor keeps an unflagged function in the running: a flag at
p = 0.9 lifts a function 3.7-fold, so a flagged 10 % function (score 9.25) outranks an
unflagged 30 % one (7.5) but not an unflagged 40 % one (10). Ties go to the larger cumulative
share, then to the name.
"""

from __future__ import annotations

from collections.abc import Sequence

from speedproof.advisor.flags import AdvisorFlags
from speedproof.discovery import HotFunction

UNFLAGGED_PRIOR = 0.25


def score(function: HotFunction, flags: AdvisorFlags | None) -> float:
    found = flags.of(function.name) if flags is not None else None
    top = found.top if found is not None else None
    strongest = top.probability if top is not None else 0.0
    return round(function.self_pct * (UNFLAGGED_PRIOR + (1 - UNFLAGGED_PRIOR) * strongest), 6)


def rank(hot: Sequence[HotFunction], flags: AdvisorFlags | None) -> list[HotFunction]:
    """`hot` ordered by score, highest first."""
    return sorted(hot, key=lambda f: (-score(f, flags), -f.cum_pct, f.name))
