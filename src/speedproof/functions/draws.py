"""Inputs drawn over a case's whole contract with Hypothesis, the same for the same seed.

Each input is one Hypothesis example of a strategy derived from the contract (`input_strategy`):
ints over the contract's whole range mixed with its boundaries (lo, hi, 0, +-1, +-2000, 10^6 + 1)
and small values (so duplicates are common), floats where the contract allows them (integral
ones too, equal to int keys), lists drawn item by item or from a small pool (duplicates). The
first list argument's length is planned, not drawn: every length 0..`sweep`, then the contract's
`sizes` (below, above and at the top of its range); the other lists get short random lengths so
that a large main list stays cheap for an O(n*q) reference. Extremes of the item range are put
at the first and the last position on a fixed share of the inputs.

Determinism: every group of inputs is one run of `hypothesis.given` over its strategy with
`hypothesis.seed` set from (seed, group), no database and the generate phase only; the first
example Hypothesis tries is its simplest one (all zeros), so the second is kept (or the first,
when the strategy has no other).
Lists longer than `HYPOTHESIS_ITEMS` exceed what one Hypothesis example holds (its choice buffer
overruns near 8 KiB of choices): their first 32 items come from Hypothesis and the rest from a
`random.Random` that Hypothesis seeds (`st.randoms(use_true_random=True)`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import hypothesis
import hypothesis.errors
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from speedproof.functions.contract import ArgContract, Contract, IntArg, ListArg, TupleArg

Json = Any

# Values at which hand-written shortcuts tend to break: table bounds (+-2000), "big" thresholds
# (10^6), signs.
LANDMARKS = (0, 1, -1, 2, 2000, 2001, -2000, -2001, 10**6, 10**6 + 1, -(10**6) - 1)
HYPOTHESIS_ITEMS = 160
_HEAD = 32
_KEEP = 2  # keep the second example: the first is Hypothesis's simplest (all zeros)
_OTHER_CAP_LARGE = 16
_CHUNK_INPUTS = 8
_CHUNK_ITEMS = 320

_SETTINGS = settings(
    database=None,
    phases=[Phase.generate],
    max_examples=_KEEP,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def int_strategy(arg: IntArg) -> SearchStrategy[Json]:
    """The whole range, its boundaries and landmarks, and small values; floats if allowed."""
    marks = {arg.lo, arg.hi, arg.lo + 1, arg.hi - 1, *LANDMARKS}
    edges = sorted(v for v in marks if arg.lo <= v <= arg.hi)
    small = (
        st.integers(max(arg.lo, -64), min(arg.hi, 64)) if arg.lo <= 64 and arg.hi >= -64 else None
    )
    parts: list[SearchStrategy[Json]] = [st.integers(arg.lo, arg.hi), st.sampled_from(edges)]
    if small is not None:
        parts.append(small)
    pool = [v for v in arg.pool if arg.lo <= v <= arg.hi]
    if pool:
        parts.append(st.sampled_from(pool))
    if arg.floats:
        parts.append(st.floats(arg.float_lo, arg.float_hi, allow_nan=False, allow_infinity=False))
        whole = st.integers(int(max(arg.float_lo, -64)), int(min(arg.float_hi, 64)))
        parts.append(whole.map(float))
    return st.one_of(parts)


def _fresh(arg: ArgContract, rng: random.Random) -> Json:
    """One value under `arg` from a plain seeded generator (for items past `HYPOTHESIS_ITEMS`)."""
    if isinstance(arg, IntArg):
        if arg.floats and rng.random() < 0.25:
            return rng.uniform(arg.float_lo, arg.float_hi)
        return rng.randint(arg.lo, arg.hi) if rng.random() < 0.5 else rng.randint(-64, 64)
    if isinstance(arg, TupleArg):
        return [_fresh(item, rng) for item in arg.items]
    return [_fresh(arg.item, rng) for _ in range(rng.randint(arg.min_len, min(arg.max_len, 8)))]


def _clip(arg: ArgContract, value: Json) -> Json:
    """`value` kept inside `arg` (a plain draw of small ints may fall outside a narrow range)."""
    if isinstance(arg, IntArg) and isinstance(value, int):
        return min(max(value, arg.lo), arg.hi)
    if isinstance(arg, TupleArg):
        return [_clip(item, part) for item, part in zip(arg.items, value, strict=True)]
    if isinstance(arg, ListArg):
        return [_clip(arg.item, part) for part in value]
    return value


def _stretch(arg: ListArg, head: list[Json], rng: random.Random, length: int) -> list[Json]:
    """`length` items: the Hypothesis-drawn head, then repeats of it and fresh values."""
    items = list(head[:length])
    while len(items) < length:
        repeat = head and rng.random() < 0.5
        items.append(rng.choice(head) if repeat else _clip(arg.item, _fresh(arg.item, rng)))
    return items


def list_strategy(arg: ListArg, length: int) -> SearchStrategy[list[Json]]:
    """Lists of exactly `length` items: drawn item by item, or from a pool of a few values."""
    item = arg_strategy(arg.item)
    if length > HYPOTHESIS_ITEMS:
        head = st.lists(item, min_size=_HEAD, max_size=_HEAD)
        return st.tuples(head, st.randoms(use_true_random=True)).map(
            lambda pair: _stretch(arg, pair[0], pair[1], length)
        )
    plain = st.lists(item, min_size=length, max_size=length)
    if length < 2:
        return plain
    pooled = st.lists(item, min_size=1, max_size=6).flatmap(
        lambda pool: st.lists(st.sampled_from(pool), min_size=length, max_size=length)
    )
    return st.one_of(plain, pooled)


def arg_strategy(arg: ArgContract, cap: int | None = None) -> SearchStrategy[Json]:
    """Values under `arg`; a list's length at most `cap` (or its contract maximum)."""
    if isinstance(arg, IntArg):
        return int_strategy(arg)
    if isinstance(arg, TupleArg):
        return st.tuples(*(arg_strategy(item) for item in arg.items)).map(list)
    top = arg.max_len if cap is None else max(arg.min_len, min(arg.max_len, cap))
    return st.integers(arg.min_len, top).flatmap(lambda n: list_strategy(arg, n))


def input_strategy(contract: Contract, length: int) -> SearchStrategy[list[Json]]:
    """One argument list whose first list argument has exactly `length` items."""
    main = contract.main
    cap = max(4, length // 2) if length <= contract.sweep else _OTHER_CAP_LARGE
    parts: list[SearchStrategy[Json]] = []
    for index, arg in enumerate(contract.args):
        if index == main:
            assert isinstance(arg, ListArg)
            parts.append(list_strategy(arg, length))
        else:
            parts.append(arg_strategy(arg, cap))
    return st.tuples(*parts).map(list)


def plan(contract: Contract) -> list[int]:
    """The main list's length of every contract input: the sweep, then the extra sizes."""
    main = contract.main
    if main is None:
        return [0] * (contract.sweep + 1)
    arg = contract.args[main]
    assert isinstance(arg, ListArg)
    top = min(contract.sweep, arg.max_len)
    return [*range(arg.min_len, top + 1), *contract.sizes]


def _seed_of(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def _example(strategy: SearchStrategy[list[Json]], key: str) -> list[Json]:
    seen: list[list[Json]] = []

    # `@given` rather than `find`: a found example is replayed and pretty-printed for a report
    # nobody reads, which took two thirds of the drawing time.
    @hypothesis.seed(_seed_of(key))
    @_SETTINGS
    @hypothesis.given(strategy)
    def collect(value: list[Json]) -> None:
        seen.append(value)

    collect()
    # The second example, or the first where the strategy has no other (an empty list only).
    return seen[min(_KEEP, len(seen)) - 1]


def _place(contract: Contract, value: list[Json], index: int) -> list[Json]:
    """Extremes of the main list's item range at its first and/or last position (4 in 5)."""
    main = contract.main
    if main is None:
        return value
    arg = contract.args[main]
    assert isinstance(arg, ListArg)
    items = value[main]
    if not isinstance(arg.item, IntArg) or not items:
        return value
    item = arg.item
    extremes = [v for v in (item.hi, item.lo, 10**6 + 1, -(10**6) - 1) if item.lo <= v <= item.hi]
    mode, pick = index % 5, extremes[(index // 5) % len(extremes)]
    if mode in (1, 3):
        items[0] = pick
    if mode in (2, 3):
        items[-1] = pick
    return value


def _chunks(lengths: list[int]) -> list[list[int]]:
    """Consecutive lengths drawn in one Hypothesis example: a `find` costs about 15 ms before it
    draws anything, so up to 8 inputs (at most `_CHUNK_ITEMS` items, well inside one example's
    choice buffer) share one; a list past `HYPOTHESIS_ITEMS` is drawn alone."""
    chunks: list[list[int]] = []
    for length in lengths:
        last = chunks[-1] if chunks else None
        fits = (
            last is not None
            and len(last) < _CHUNK_INPUTS
            and length <= HYPOTHESIS_ITEMS
            and max(last) <= HYPOTHESIS_ITEMS
            and sum(last) + length <= _CHUNK_ITEMS
        )
        if fits and last is not None:
            last.append(length)
        else:
            chunks.append([length])
    return chunks


@dataclass(frozen=True)
class Group:
    """Inputs drawn as one Hypothesis example: their lengths, the index of the first, its key."""

    lengths: list[int]
    start: int
    key: str

    def strategy(self, contract: Contract) -> SearchStrategy[list[list[Json]]]:
        parts = (input_strategy(contract, length) for length in self.lengths)
        return st.tuples(*parts).map(list)


def groups(contract: Contract, seed: int) -> list[Group]:
    """The Hypothesis examples one verification's contract inputs come from, in order."""
    found, start = [], 0
    for number, chunk in enumerate(_chunks(plan(contract))):
        found.append(Group(chunk, start, f"{seed}:{number}"))
        start += len(chunk)
    return found


def contract_inputs(contract: Contract, seed: int) -> list[list[Json]]:
    """Every contract input of one verification, in `plan` order; the same for the same seed."""
    drawn: list[list[Json]] = []
    for group in groups(contract, seed):
        values = _example(group.strategy(contract), group.key)
        drawn += [_place(contract, value, group.start + at) for at, value in enumerate(values)]
    return drawn


class _Fails(Exception):
    """Raised inside a shrinking run: this example still fails."""


_SHRINK = settings(
    _SETTINGS,
    phases=[Phase.generate, Phase.shrink],
    verbosity=hypothesis.Verbosity.quiet,
    report_multiple_bugs=False,
    print_blob=False,
)


def shrink(
    contract: Contract, group: Group, position: int, fails: Callable[[list[Json]], bool]
) -> list[Json] | None:
    """The smallest input Hypothesis's shrinker finds that still `fails`, starting from the
    group's example (drawn again from its key), whose input at `position` failed: the lengths
    stay, the values shrink towards 0 and towards repeats. None when the failure does not repeat.
    """
    smallest: list[list[Json]] = []

    @hypothesis.seed(_seed_of(group.key))
    @_SHRINK
    @hypothesis.given(group.strategy(contract))
    def probe(values: list[list[Json]]) -> None:
        value = _place(contract, values[position], group.start + position)
        if fails(value):
            smallest[:] = [value]
            raise _Fails

    try:
        probe()
    except (_Fails, hypothesis.errors.Flaky):
        return smallest[0] if smallest else None
    return None
