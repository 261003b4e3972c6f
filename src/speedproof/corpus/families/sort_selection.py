"""Sort selection (held out): the `count` smallest normalised values, selected by hand or sorted."""

from __future__ import annotations

from speedproof.corpus.families.base import (
    ContractArgs,
    Family,
    Knobs,
    Size,
    Template,
    at_least,
    int_list,
    items,
    render,
    sizes,
)
from speedproof.functions.case import InputSpec, Json

V = 5000
SIG = "xs"


def _inputs(k: Knobs, size: Size) -> InputSpec:
    wide = InputSpec(args=[int_list(-V, V, *sizes(size))])
    # Half the random inputs are longer than `count`: only then is anything cut off.
    count = k.p("count")
    longer = InputSpec(args=[int_list(-V, V, count + 1, max(count + 2, size.n))])
    return at_least(size, wide, longer)


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[3]], [[2, 1, 2, 1]], [list(range(k.p("count") + 3, 0, -1))]]


def _fast(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = $count
        return sorted([$kx for x in xs])[:count]
        """,
        count=str(k.p("count")),
        kx=k.prelude.key("x"),
    )


def _slow_repeated_min(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = $count
        values = [$kx for x in xs]
        out = []
        for step in range(min(count, len(values))):
            best = 0
            for i in range(1, len(values)):
                if values[i] < values[best]:
                    best = i
            out.append(values.pop(best))
        return out
        """,
        count=str(k.p("count")),
        kx=k.prelude.key("x"),
    )


def _slow_selection_sort(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = $count
        values = [$kx for x in xs]
        for i in range(len(values)):
            low = i
            for j in range(i + 1, len(values)):
                if values[j] < values[low]:
                    low = j
            values[i], values[low] = values[low], values[i]
        return values[:count]
        """,
        count=str(k.p("count")),
        kx=k.prelude.key("x"),
    )


def _slow_insertion_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        count = $count
        out = []
        for x in xs:
            value = $kx
            i = 0
            while i < len(out) and out[i] <= value:
                i += 1
            out.insert(i, value)
        return out[:count]
        """,
        count=str(k.p("count")),
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items()], []


FAMILY = Family(
    name="sort_selection",
    seen=False,
    preludes=("mod", "bucket", "affine", "absmod"),
    templates=(
        Template("repeated_min", "frozen_heldout", _slow_repeated_min, _fast, 300),
        Template("selection_sort", "frozen_heldout", _slow_selection_sort, _fast, 200),
        Template("insertion_while", "frozen_heldout", _slow_insertion_while, _fast, 220),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: (
        isinstance(out, list) and isinstance(args[0], list) and len(out) < len(args[0])
    ),
    slots=(("count", 10, 89),),
)
