"""Distinct cardinality: how many different normalised values, counted by scans or by a set."""

from __future__ import annotations

from speedproof.corpus.families.base import (
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    dense_list,
    dense_then_wide,
    int_item,
    int_list,
    items,
    render,
    sizes,
    takes_floats,
)
from speedproof.functions.case import InputSpec, Json

V = 5000
SIG = "xs"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    wide = InputSpec(args=[int_list(-V, V, *sizes(size))])
    return dense_then_wide(size, InputSpec(args=[dense_list(k.prelude, size)]), wide, 3)


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[0]], [[3, 3, 3]], [[-4, 4, -4, 4]], [[V, -V, V - 1, 1 - V]]]


def _fast(k: Knobs) -> str:
    return render(k, SIG, "return len({$kx for x in xs})", kx=k.prelude.key("x"))


def _slow_seen_list(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        seen = []
        for x in xs:
            key = $kx
            if key not in seen:
                seen.append(key)
        return len(seen)
        """,
        kx=k.prelude.key("x"),
    )


def _slow_earlier_scan(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = 0
        for i in range(len(xs)):
            duplicate = False
            for j in range(i):
                if $kj == $ki:
                    duplicate = True
                    break
            if not duplicate:
                count += 1
        return count
        """,
        ki=k.prelude.key("xs[i]"),
        kj=k.prelude.key("xs[j]"),
    )


def _slow_prefix_count(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = [$kx for x in xs]
        total = 0
        for i, key in enumerate(keys):
            if keys[:i].count(key) == 0:
                total += 1
        return total
        """,
        kx=k.prelude.key("x"),
    )


def _slow_pop_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = []
        for x in xs:
            keys.append($kx)
        count = 0
        while keys:
            key = keys.pop()
            if key not in keys:
                count += 1
        return count
        """,
        kx=k.prelude.key("x"),
    )


def _slow_nested_comprehension(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        return len([i for i in range(len(xs)) if $ki not in [$ky for y in xs[:i]]])
        """,
        ki=k.prelude.key("xs[i]"),
        ky=k.prelude.key("y"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(int_item(takes_floats(k)))], []


FAMILY = Family(
    name="distinct_cardinality",
    seen=True,
    preludes=("mod", "bucket", "affine", "xor", "absmod"),
    templates=(
        Template("seen_list", "train", _slow_seen_list, _fast, 500),
        Template("earlier_scan", "train", _slow_earlier_scan, _fast, 160),
        Template("prefix_count", "train", _slow_prefix_count, _fast, 310),
        Template("pop_while", "dev", _slow_pop_while, _fast, 400),
        Template("nested_comprehension", "frozen_seen", _slow_nested_comprehension, _fast, 170),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, int) and isinstance(args[0], list) and out < len(args[0]),
)
