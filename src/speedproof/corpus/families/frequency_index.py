"""Frequency index: how often each query occurs among normalised values, counted once in a dict."""

from __future__ import annotations

from speedproof.corpus.families.base import (
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    choice_list,
    dense_keys,
    dense_list,
    dense_then_wide,
    int_item,
    int_list,
    items,
    query_item,
    render,
    sizes,
    takes_floats,
)
from speedproof.functions.case import InputSpec, Json

V = 2000
SIG = "xs, queries"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    lo, hi = k.prelude.bounds(-V, V)
    # Random queries reach a quarter of the key range beyond each end, so a candidate that
    # normalises queries (`q % m`) is wrong on most inputs, not on 4 of 623 query values.
    reach = 2 if size.exact else max(3, (hi - lo) // 4)
    wide = InputSpec(
        args=[int_list(-V, V, *sizes(size)), int_list(lo - reach, hi + reach, *sizes(size, 0.5))]
    )
    dense = InputSpec(
        args=[
            dense_list(k.prelude, size),
            choice_list(dense_keys(k.prelude), *sizes(size, 0.5, least=1)),
        ]
    )
    return dense_then_wide(size, dense, wide)


def _edges(k: Knobs) -> list[list[Json]]:
    lo, hi = k.prelude.bounds(-V, V)
    return [[[], []], [[], [lo]], [[3, 3], [hi, lo]], [[-1, 1, -1], [lo, lo, hi]]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        counts = dict()
        for x in xs:
            key = $kx
            counts[key] = counts.get(key, 0) + 1
        return [counts.get(q, 0) for q in queries]
        """,
        kx=k.prelude.key("x"),
    )


def _slow_counter(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            c = 0
            for x in xs:
                if $kx == q:
                    c += 1
            out.append(c)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_list_count(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            out.append([$kx for x in xs].count(q))
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_sum_ones(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            out.append(sum([1 for x in xs if $kx == q]))
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = [0] * len(queries)
        i = 0
        while i < len(queries):
            j = 0
            while j < len(xs):
                if $kj == queries[i]:
                    out[i] += 1
                j += 1
            i += 1
        return out
        """,
        kj=k.prelude.key("xs[j]"),
    )


def _slow_dict_comprehension(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        table = {q: len([x for x in xs if $kx == q]) for q in queries}
        return [table[q] for q in queries]
        """,
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(int_item(takes_floats(k))), items(query_item(k))], []


FAMILY = Family(
    name="frequency_index",
    seen=True,
    preludes=("mod", "bucket", "absmod", "xor"),
    templates=(
        Template("counter", "train", _slow_counter, _fast, 195),
        Template("list_count", "train", _slow_list_count, _fast, 180),
        Template("sum_ones", "train", _slow_sum_ones, _fast, 200),
        Template("index_while", "dev", _slow_while, _fast, 90),
        Template("dict_comprehension", "frozen_seen", _slow_dict_comprehension, _fast, 190),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, list) and any(c != 0 for c in out),
)
