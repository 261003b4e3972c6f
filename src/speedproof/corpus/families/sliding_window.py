"""Fixed sliding window: sum, max or min of every window of `width` consecutive values.

The fast sum slides a running total; the fast max and min keep a monotonic queue in a list with
a head index (no `collections.deque`: imports are outside the function subset).
"""

from __future__ import annotations

from speedproof.corpus.families.base import (
    BUILTIN,
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    at_least,
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
    wide = InputSpec(args=[int_list(-V, V, *sizes(size))])
    # Half the random inputs are at least a window long: below it every template answers [].
    window = k.p("size")
    longer = InputSpec(args=[int_list(-V, V, window - 1, max(window, size.n))])
    return at_least(size, wide, longer)


def _edges(k: Knobs) -> list[list[Json]]:
    w = k.p("size")
    return [[[]], [[1]], [list(range(w - 1))], [list(range(w))], [[7] * (w + 2)]]


def _fast_sum(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        keys = [$kx for x in xs]
        if len(keys) < size:
            return []
        total = sum(keys[:size])
        out = [total]
        for i in range(size, len(keys)):
            total += keys[i] - keys[i - size]
            out.append(total)
        return out
        """,
        size=str(k.p("size")),
        kx=k.prelude.key("x"),
    )


def _fast_extreme(k: Knobs) -> str:
    worse = "<=" if k.op == "max" else ">="
    return render(
        k,
        SIG,
        """
        size = $size
        keys = [$kx for x in xs]
        queue = []
        head = 0
        out = []
        for i in range(len(keys)):
            while len(queue) > head and keys[queue[-1]] $worse keys[i]:
                queue.pop()
            queue.append(i)
            if queue[head] <= i - size:
                head += 1
            if i >= size - 1:
                out.append(keys[queue[head]])
        return out
        """,
        size=str(k.p("size")),
        kx=k.prelude.key("x"),
        worse=worse,
    )


def _fast(k: Knobs) -> str:
    return _fast_sum(k) if k.op == "sum" else _fast_extreme(k)


def _slow_nested(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        keys = [$kx for x in xs]
        out = []
        for i in range(len(keys) - size + 1):
            acc = keys[i]
            for j in range(i + 1, i + size):
                acc = $step
            out.append(acc)
        return out
        """,
        size=str(k.p("size")),
        kx=k.prelude.key("x"),
        step=combine(k.op, "acc", "keys[j]"),
    )


def _slow_builtin_slices(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        out = []
        for i in range(len(xs) - size + 1):
            out.append($agg([$kx for x in xs[i : i + size]]))
        return out
        """,
        size=str(k.p("size")),
        agg=BUILTIN[k.op],
        kx=k.prelude.key("x"),
    )


def _slow_trailing(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        out = []
        for i in range(size - 1, len(xs)):
            acc = $ki
            for x in xs[i - size + 1 : i]:
                acc = $step
            out.append(acc)
        return out
        """,
        size=str(k.p("size")),
        ki=k.prelude.key("xs[i]"),
        step=combine(k.op, "acc", k.prelude.pkey("x")),
    )


def _slow_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        out = []
        start = 0
        while start + size <= len(xs):
            acc = $ks
            j = start + 1
            while j < start + size:
                acc = $step
                j += 1
            out.append(acc)
            start += 1
        return out
        """,
        size=str(k.p("size")),
        ks=k.prelude.key("xs[start]"),
        step=combine(k.op, "acc", k.prelude.pkey("xs[j]")),
    )


def _slow_comprehension(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        size = $size
        keys = [$kx for x in xs]
        return [$agg([keys[j] for j in range(i, i + size)]) for i in range(len(keys) - size + 1)]
        """,
        size=str(k.p("size")),
        agg=BUILTIN[k.op],
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items()], []


FAMILY = Family(
    name="sliding_window",
    seen=True,
    preludes=("mod", "bucket", "affine", "xor"),
    ops=("sum", "max", "min"),
    templates=(
        Template("nested", "train", _slow_nested, _fast, 500),
        Template("builtin_slices", "train", _slow_builtin_slices, _fast, 400),
        Template("trailing", "train", _slow_trailing, _fast, 450),
        Template("start_while", "dev", _slow_while, _fast, 180),
        Template("comprehension", "frozen_seen", _slow_comprehension, _fast, 400),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(out, list) and len(out) > 0,
    slots=(("size", 16, 95),),
)
