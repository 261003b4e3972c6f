"""Complement lookup: pairs of normalised values summing to a target, counted with a dict."""

from __future__ import annotations

from speedproof.corpus.families.base import (
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    choice_list,
    dense_then_wide,
    int_list,
    items,
    render,
    sizes,
)
from speedproof.functions.case import InputSpec, Json

# Wide enough that a bucket key (x // width, width up to 41) can reach every band's target (up to
# 899): with 3000, dev and frozen bucket cases could never reach theirs and answered 0 throughout.
V = 20000
SIG = "xs"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    wide = InputSpec(args=[int_list(-V, V, *sizes(size))])
    pool = [*_complements(k), 0]
    # Four in five from the pool, at least three items long: shorter inputs (a third of
    # log-uniform draws up to 120) rarely hold a pair and answer 0.
    dense = InputSpec(args=[choice_list(pool, *sizes(size, least=3))])
    return dense_then_wide(size, dense, wide, 4)


def _complements(k: Knobs) -> list[int]:
    """Up to three pairs of values whose keys sum to the target (none if it cannot be reached:
    then every output is 0 and the adequacy bar refuses the case). Few pairs, so that even a
    list of four items from the pool holds a pair about one time in two."""
    key = k.prelude.key_function()
    by_key: dict[int, int] = {}
    for v in range(-V, V + 1):
        by_key.setdefault(key(v), v)
    target = k.p("target")
    pairs = [(v, by_key[target - a]) for a, v in sorted(by_key.items()) if target - a in by_key]
    step = max(1, len(pairs) // 3)
    chosen = [v for pair in pairs[::step][:3] for v in pair]
    # A value whose key is half the target pairs with itself: it tells `keys[i + 1:]` from
    # `keys[i:]` (a mutant that survived 1 draw in 6 without it).
    half = by_key.get(target // 2) if target % 2 == 0 else None
    return chosen if half is None else [*chosen, half]


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[5]], [[0, 0, 0]], [[1, -1, 2, -2, 3]], [[V, -V, V, -V]]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        seen = dict()
        count = 0
        for x in xs:
            key = $kx
            count += seen.get(target - key, 0)
            seen[key] = seen.get(key, 0) + 1
        return count
        """,
        kx=k.prelude.key("x"),
        target=str(k.p("target")),
    )


def _slow_index_pairs(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        count = 0
        for i in range(len(xs)):
            for j in range(i + 1, len(xs)):
                if $ki + $kj == target:
                    count += 1
        return count
        """,
        ki=k.prelude.pkey("xs[i]"),
        kj=k.prelude.pkey("xs[j]"),
        target=str(k.p("target")),
    )


def _slow_tail_slices(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        keys = [$kx for x in xs]
        count = 0
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if a + b == target:
                    count += 1
        return count
        """,
        kx=k.prelude.key("x"),
        target=str(k.p("target")),
    )


def _slow_tail_count(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        keys = [$kx for x in xs]
        count = 0
        for i in range(len(keys)):
            count += keys[i + 1 :].count(target - keys[i])
        return count
        """,
        kx=k.prelude.key("x"),
        target=str(k.p("target")),
    )


def _slow_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        count = 0
        i = 0
        while i < len(xs):
            j = 0
            while j < i:
                if $ki + $kj == target:
                    count += 1
                j += 1
            i += 1
        return count
        """,
        ki=k.prelude.pkey("xs[i]"),
        kj=k.prelude.pkey("xs[j]"),
        target=str(k.p("target")),
    )


def _slow_double_generator(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        target = $target
        keys = [$kx for x in xs]
        return sum([1 for i in range(len(keys)) for j in range(i) if keys[i] + keys[j] == target])
        """,
        kx=k.prelude.key("x"),
        target=str(k.p("target")),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items()], []


FAMILY = Family(
    name="complement_lookup",
    seen=True,
    preludes=("mod", "bucket", "absmod"),
    templates=(
        Template("index_pairs", "train", _slow_index_pairs, _fast, 135),
        Template("tail_slices", "train", _slow_tail_slices, _fast, 225),
        Template("tail_count", "train", _slow_tail_count, _fast, 310),
        Template("index_while", "dev", _slow_while, _fast, 95),
        Template("double_generator", "frozen_seen", _slow_double_generator, _fast, 170),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, int) and out > 0,
    slots=(("target", 100, 899),),
)
