"""JSON values drawn by Hypothesis, from a seed: what an altered JSON leaf becomes.

Hypothesis's strategy for JSON-shaped values (null, booleans, integers of any size, floats,
text with any code point, and arrays and objects of them, nested) reaches values no hand-written
list would: `-0.0`, 2^70, `"\\u0000"`, keys that are empty or astral. `@seed` makes the draw
the same for the same seed on one Hypothesis version, so a judgement's variants can be made
again from its ledger facts with the same installation.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

# Values a pool holds, and pools: a draw costs Hypothesis's start (0.1-0.3 s, ten times that
# on a loaded machine), so a judge process draws at most `POOLS` of them, once each, and a
# variant picks its pool and then its values with its own seeded generator.
POOL = 32
POOLS = 8
# Hypothesis runs one `given` at a time; the variants gate's two workers may both ask.
_ONE_AT_A_TIME = threading.Lock()

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=8,
)


def json_values(drawn_from: int) -> tuple[Any, ...]:
    """`POOL` JSON values Hypothesis draws from pool `drawn_from % POOLS`."""
    with _ONE_AT_A_TIME:
        return _pool(drawn_from % POOLS)


@functools.lru_cache(maxsize=POOLS)
def _pool(drawn_from: int) -> tuple[Any, ...]:
    found: list[Any] = []

    @settings(
        max_examples=POOL,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(drawn_from)
    @given(JSON_VALUES)
    def collect(value: Any) -> None:
        found.append(value)

    collect()
    return tuple(found) or (None,)
