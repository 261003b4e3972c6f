"""String concatenation (held out): a string grown by copying concatenation, or joined once.

The slow forms defeat CPython's in-place `s = s + t` shortcut on purpose (`s + sep + t` copies
`s` into a temporary; prepending always copies), so each step costs the length built so far.
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
    render,
    sizes,
)
from speedproof.functions.case import InputSpec, Json

V = 9000
SIG = "xs"
SEPARATORS = (",", ";", "|", ":", "/")


def _sep(k: Knobs) -> str:
    return repr(SEPARATORS[k.p("sep") % len(SEPARATORS)])


def _inputs(k: Knobs, size: Size) -> InputSpec:
    return InputSpec(args=[int_list(-V, V, *sizes(size))])


def _edges(k: Knobs) -> list[list[Json]]:
    return [[[]], [[0]], [[-1, 1]], [[V, V, V]]]


def _slow_trailing(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        text = ""
        for x in xs:
            text = text + str($kx) + sep
        return text
        """,
        sep=_sep(k),
        kx=k.prelude.key("x"),
    )


def _fast_trailing(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        return "".join([str($kx) + sep for x in xs])
        """,
        sep=_sep(k),
        kx=k.prelude.key("x"),
    )


def _slow_prepend(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        text = ""
        for i, x in enumerate(xs):
            if i == 0:
                text = str($kx)
            else:
                text = str($kx) + sep + text
        return text
        """,
        sep=_sep(k),
        kx=k.prelude.key("x"),
    )


def _fast_prepend(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        parts = [str($kx) for x in xs]
        parts.reverse()
        return sep.join(parts)
        """,
        sep=_sep(k),
        kx=k.prelude.key("x"),
    )


def _slow_between_while(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        text = ""
        i = 0
        while i < len(xs):
            if i > 0:
                text = text + sep + str($ki)
            else:
                text = str($ki)
            i += 1
        return text
        """,
        sep=_sep(k),
        ki=k.prelude.key("xs[i]"),
    )


def _fast_between(k: Knobs) -> str:
    return render(
        k,
        SIG,
        """
        sep = $sep
        return sep.join([str($kx) for x in xs])
        """,
        sep=_sep(k),
        kx=k.prelude.key("x"),
    )


def _contract(k: Knobs) -> ContractArgs:
    return [items()], []


FAMILY = Family(
    name="string_concat",
    seen=False,
    preludes=("mod", "bucket", "xor"),
    templates=(
        Template("trailing_sep", "frozen_heldout", _slow_trailing, _fast_trailing, 2000),
        Template("prepend", "frozen_heldout", _slow_prepend, _fast_prepend, 2000),
        Template("between_while", "frozen_heldout", _slow_between_while, _fast_between, 2000),
    ),
    inputs=_inputs,
    contract=_contract,
    edges=_edges,
    hit=lambda args, out: isinstance(args[0], list) and len(args[0]) >= 2,
    slots=(("sep", 0, 99),),
)
