"""Indexed lookup (held out): position of the first value whose key equals each query, or -1."""

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
    spread = (hi - lo + 1) * (2 if size.exact else 0) + 3
    wide = InputSpec(
        args=[
            int_list(-V, V, *sizes(size)),
            int_list(lo - spread, hi + spread, *sizes(size, 0.5)),
        ]
    )
    dense = InputSpec(
        args=[
            dense_list(k.prelude, size),
            choice_list(dense_keys(k.prelude), *sizes(size, 0.5, least=1)),
        ]
    )
    return dense_then_wide(size, dense, wide)


def _edges(k: Knobs) -> list[list[Json]]:
    lo, _ = k.prelude.bounds(-V, V)
    return [[[], []], [[], [lo]], [[4, 4], [lo, lo - 1]], [[-2, 2, -2], [0, 1, 2, 3]]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        first = dict()
        for i, x in enumerate(xs):
            key = $kx
            if key not in first:
                first[key] = i
        return [first.get(q, -1) for q in queries]
        """,
        kx=k.prelude.key("x"),
    )


def _slow_scan_break(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            found = -1
            for i, x in enumerate(xs):
                if $kx == q:
                    found = i
                    break
            out.append(found)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_list_index(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            keys = [$kx for x in xs]
            if q in keys:
                out.append(keys.index(q))
            else:
                out.append(-1)
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
        for q in queries:
            i = 0
            while i < len(xs) and $ki != q:
                i += 1
            out.append(i if i < len(xs) else -1)
        return out
        """,
        ki=k.prelude.key("xs[i]"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(int_item(takes_floats(k))), items(query_item(k))], []


FAMILY = Family(
    name="indexed_lookup",
    seen=False,
    preludes=("mod", "bucket", "affine", "xor"),
    templates=(
        Template("scan_break", "frozen_heldout", _slow_scan_break, _fast, 160),
        Template("list_index", "frozen_heldout", _slow_list_index, _fast, 160),
        Template("while_probe", "frozen_heldout", _slow_while, _fast, 130),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, list) and any(i != -1 for i in out),
)
