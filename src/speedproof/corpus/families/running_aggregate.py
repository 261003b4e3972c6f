"""Running aggregate: sum, max or min of every prefix, recomputed per prefix or carried along."""

from __future__ import annotations

from speedproof.corpus.families.base import (
    BUILTIN,
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    combine,
    int_list,
    items,
    render,
    sizes,
)
from speedproof.functions.case import InputSpec, Json

V = 3000
SIG = "xs"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    return InputSpec(args=[int_list(-V, V, *sizes(size))])


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[4]], [[-1, -1, -1]], [[5, -5, 5, -5]], [[-V, V, 0]]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for i, x in enumerate(xs):
            key = $kx
            acc = key if i == 0 else $step
            out.append(acc)
        return out
        """,
        kx=k.prelude.key("x"),
        step=combine(k.op, "acc", "key"),
    )


def _slow_nested(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for i in range(len(xs)):
            acc = $k0
            for j in range(1, i + 1):
                acc = $step
            out.append(acc)
        return out
        """,
        k0=k.prelude.key("xs[0]"),
        step=combine(k.op, "acc", k.prelude.pkey("xs[j]")),
    )


def _slow_builtin_prefix(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        for i in range(len(xs)):
            out.append($agg([$kx for x in xs[: i + 1]]))
        return out
        """,
        agg=BUILTIN[k.op],
        kx=k.prelude.key("x"),
    )


def _slow_window_copy(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = [$kx for x in xs]
        out = []
        for i in range(len(keys)):
            window = keys[: i + 1]
            acc = window[0]
            for value in window[1:]:
                acc = $step
            out.append(acc)
        return out
        """,
        kx=k.prelude.key("x"),
        step=combine(k.op, "acc", "value"),
    )


def _slow_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        out = []
        i = 0
        while i < len(xs):
            acc = $k0
            j = 1
            while j <= i:
                acc = $step
                j += 1
            out.append(acc)
            i += 1
        return out
        """,
        k0=k.prelude.key("xs[0]"),
        step=combine(k.op, "acc", k.prelude.pkey("xs[j]")),
    )


def _slow_comprehension(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        keys = [$kx for x in xs]
        return [$agg(keys[: i + 1]) for i in range(len(keys))]
        """,
        agg=BUILTIN[k.op],
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items()], []


FAMILY = Family(
    name="running_aggregate",
    seen=True,
    preludes=("mod", "bucket", "affine", "xor"),
    ops=("sum", "max", "min"),
    templates=(
        Template("nested", "train", _slow_nested, _fast, 165),
        Template("builtin_prefix", "train", _slow_builtin_prefix, _fast, 170),
        Template("window_copy", "train", _slow_window_copy, _fast, 230),
        Template("index_while", "dev", _slow_while, _fast, 120),
        Template("comprehension", "frozen_seen", _slow_comprehension, _fast, 290),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(args[0], list) and len(args[0]) >= 2,
)
