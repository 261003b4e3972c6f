"""Hash membership: "is some normalised x equal to q?" asked by a scan, answered by a set."""

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
    # Benchmark queries mostly miss (a wide range), so the scan cannot stop early.
    spread = (hi - lo + 1) * (2 if size.exact else 0) + 3
    xs_len = sizes(size)
    q_len = sizes(size, 0.5)
    wide = InputSpec(args=[int_list(-V, V, *xs_len), int_list(lo - spread, hi + spread, *q_len)])
    dense = InputSpec(
        args=[
            dense_list(k.prelude, size),
            choice_list(dense_keys(k.prelude), *sizes(size, 0.5, least=1)),
        ]
    )
    return dense_then_wide(size, dense, wide, 4)


def _found(out: Json) -> int:
    """How many queries hit, whatever form a template answers in (flags, a count, the hits)."""
    if isinstance(out, int):
        return out
    if isinstance(out, list):
        return sum(1 for v in out if v is True or not isinstance(v, bool))
    return 0


def _edges(k: Knobs) -> list[list[Json]]:
    lo, _ = k.prelude.bounds(-V, V)
    return [[[], []], [[], [lo]], [[7], []], [[-5, -5, 5], [lo, lo + 1]], [[V, -V, 0], [0, 1, 2]]]


def _slow_flag(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            hit = False
            for x in xs:
                if $kx == q:
                    hit = True
                    break
            out.append(hit)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _fast_list(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = set()
        for x in xs:
            keys.add($kx)
        return [q in keys for q in queries]
        """,
        kx=k.prelude.key("x"),
    )


def _slow_rebuilt_list(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = 0
        for q in queries:
            if q in [$kx for x in xs]:
                count += 1
        return count
        """,
        kx=k.prelude.key("x"),
    )


def _fast_count(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = set()
        for x in xs:
            keys.add($kx)
        count = 0
        for q in queries:
            if q in keys:
                count += 1
        return count
        """,
        kx=k.prelude.key("x"),
    )


def _slow_for_else(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for q in queries:
            for x in xs:
                if $kx == q:
                    out.append(True)
                    break
            else:
                out.append(False)
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
        i = 0
        while i < len(queries):
            j = 0
            found = False
            while j < len(xs) and not found:
                if $kx == queries[i]:
                    found = True
                j += 1
            out.append(found)
            i += 1
        return out
        """,
        kx=k.prelude.key("xs[j]"),
    )


def _slow_any_filter(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        return [q for q in queries if any($kx == q for x in xs)]
        """,
        kx=k.prelude.key("x"),
    )


def _fast_filter(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = set()
        for x in xs:
            keys.add($kx)
        return [q for q in queries if q in keys]
        """,
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(int_item(takes_floats(k))), items(query_item(k))], []


FAMILY = Family(
    name="hash_membership",
    seen=True,
    preludes=("mod", "bucket", "affine", "xor", "absmod"),
    templates=(
        Template("flag_break", "train", _slow_flag, _fast_list, 200),
        Template("rebuilt_list", "train", _slow_rebuilt_list, _fast_count, 190),
        Template("for_else", "train", _slow_for_else, _fast_list, 220),
        Template("index_while", "dev", _slow_while, _fast_list, 100),
        Template("any_filter", "frozen_seen", _slow_any_filter, _fast_filter, 150),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: _found(out) > 0,
)
