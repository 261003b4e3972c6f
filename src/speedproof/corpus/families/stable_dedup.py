"""Stable deduplication: first occurrences of normalised values, in order, kept by a set."""

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
    return dense_then_wide(size, InputSpec(args=[dense_list(k.prelude, size)]), wide)


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[1]], [[2, 2, 2, 2]], [[-9, 9, -9, 9, 0]], [[V, -V, 0, V]]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        seen = set()
        out = []
        for x in xs:
            key = $kx
            if key not in seen:
                seen.add(key)
                out.append(key)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_out_scan(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for x in xs:
            key = $kx
            if key not in out:
                out.append(key)
        return out
        """,
        kx=k.prelude.key("x"),
    )


def _slow_earlier_flag(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for i in range(len(xs)):
            first = True
            for j in range(i):
                if $kj == $ki:
                    first = False
            if first:
                out.append($ki)
        return out
        """,
        ki=k.prelude.key("xs[i]"),
        kj=k.prelude.key("xs[j]"),
    )


def _slow_prefix_rebuild(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for i, x in enumerate(xs):
            if $kx not in [$ky for y in xs[:i]]:
                out.append($kx)
        return out
        """,
        kx=k.prelude.key("x"),
        ky=k.prelude.key("y"),
    )


def _slow_while_probe(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        i = 0
        while i < len(xs):
            key = $ki
            j = 0
            while j < len(out) and out[j] != key:
                j += 1
            if j == len(out):
                out.append(key)
            i += 1
        return out
        """,
        ki=k.prelude.key("xs[i]"),
    )


def _slow_all_comprehension(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        return [$ki for i in range(len(xs)) if all($kj != $ki for j in range(i))]
        """,
        ki=k.prelude.key("xs[i]"),
        kj=k.prelude.key("xs[j]"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items(int_item(takes_floats(k)))], []


FAMILY = Family(
    name="stable_dedup",
    seen=True,
    preludes=("mod", "bucket", "absmod", "xor"),
    templates=(
        Template("out_scan", "train", _slow_out_scan, _fast, 500),
        Template("earlier_flag", "train", _slow_earlier_flag, _fast, 140),
        Template("prefix_rebuild", "train", _slow_prefix_rebuild, _fast, 175),
        Template("while_probe", "dev", _slow_while_probe, _fast, 135),
        Template("all_comprehension", "frozen_seen", _slow_all_comprehension, _fast, 120),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: (
        isinstance(out, list) and isinstance(args[0], list) and len(out) < len(args[0])
    ),
)
