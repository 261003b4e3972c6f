"""Prefix range query: sums of normalised values over index ranges, answered from prefix sums.

Queries are `[lo, hi]` pairs of any ints; the answer is the sum over the indices i with
`lo <= i < hi` and `0 <= i < len(xs)`. Every template says exactly that: in corpus v2 the bounds
were drawn >= 0 only and the templates disagreed below 0 (`range(lo, ...)` and `xs[lo:hi]` wrap
a negative index from the end, a scan over `enumerate` does not), so the family's own fast
rewrite, which clamps with `min(q, n)` alone, was wrong there and still paid.
"""

from __future__ import annotations

from speedproof.corpus.families.base import (
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    int_list,
    items,
    pair_list,
    pairs,
    render,
    sizes,
)
from speedproof.functions.case import InputSpec, Json

V = 2000
SIG = "xs, queries"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    top = size.n + 2
    return InputSpec(args=[int_list(-V, V, *sizes(size)), pair_list(0, top, *sizes(size, 0.5))])


def _edges(k: Knobs) -> list[list[Json]]:
    return [
        [[], []],
        [[], [[0, 0], [0, 3]]],
        [[5], [[0, 1], [1, 0], [0, 9]]],
        [[1, 2, 3, 4], [[3, 1], [2, 2], [4, 9], [9, 12]]],
    ]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        prefix = [0]
        for x in xs:
            prefix.append(prefix[-1] + $kx)
        n = len(xs)
        out = []
        for q in queries:
            lo = min(max(q[0], 0), n)
            hi = min(max(q[1], 0), n)
            out.append(prefix[hi] - prefix[lo] if lo < hi else 0)
        return out
        """,
        kx=k.prelude.pkey("x"),
    )


def _slow_range_loop(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            total = 0
            for i in range(max(q[0], 0), min(q[1], len(xs))):
                total += $ki
            out.append(total)
        return out
        """,
        ki=k.prelude.key("xs[i]"),
    )


def _slow_slice_sum(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            out.append(sum([$kx for x in xs[max(q[0], 0) : max(q[1], 0)]]))
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_full_scan(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for lo, hi in queries:
            total = 0
            for j, x in enumerate(xs):
                if lo <= j < hi:
                    total += $kx
            out.append(total)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        qi = 0
        while qi < len(queries):
            i = max(queries[qi][0], 0)
            total = 0
            while i < queries[qi][1] and i < len(xs):
                total += $ki
                i += 1
            out.append(total)
            qi += 1
        return out
        """,
        ki=k.prelude.key("xs[i]"),
    )


def _slow_generator(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        return [sum($ki for i in range(max(q[0], 0), min(q[1], len(xs)))) for q in queries]
        """,
        ki=k.prelude.key("xs[i]"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(), pairs()], [
        "a query [lo, hi] adds up the key of xs[i] for every index i with lo <= i < hi and "
        "0 <= i < len(xs): negative bounds, bounds past the end and lo > hi are all allowed"
    ]


FAMILY = Family(
    name="prefix_range_query",
    seen=True,
    preludes=("mod", "bucket", "affine", "absmod"),
    templates=(
        Template("range_loop", "train", _slow_range_loop, _fast, 365),
        Template("slice_sum", "train", _slow_slice_sum, _fast, 445),
        Template("full_scan", "train", _slow_full_scan, _fast, 180),
        Template("pair_while", "dev", _slow_while, _fast, 200),
        Template("generator", "frozen_seen", _slow_generator, _fast, 280),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, list) and any(v != 0 for v in out),
)
