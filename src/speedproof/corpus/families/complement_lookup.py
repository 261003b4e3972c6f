"""Complement lookup: pairs of normalised values summing to a target, counted with a dict."""

from __future__ import annotations

from speedproof.corpus.families.base import Family, Knobs, Template, int_list, render, sizes
from speedproof.functions.case import InputSpec, Json

V = 3000
SIG = "xs"


def _inputs(k: Knobs, size: int | None) -> InputSpec:
    return InputSpec(args=[int_list(-V, V, *sizes(size, 24))])


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
    edges=_edges,
    slots=(("target", 100, 899),),
)
