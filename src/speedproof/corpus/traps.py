"""Named wrong candidates that earned rewards on corpus v1: the trap suite's sources.

Each builder turns a case into one wrong candidate (or None where the kind does not apply):
`return 0` (7.91 on v1 complement lookup), `return []` (7.45 on hash membership),
`[-1 for q in queries]` (6.17 on indexed lookup), a constant between 40 and 400 items and the
reference cut to its first 30 items (~3.0 on distinct cardinality), queries normalised with the
case's modulus (frequency index, 58 of 60 seeds), and answers memorised from one draw of the
benchmark inputs (6.85); and a 4,001-entry table written into the source (+4.36 on a small case
while compiling was free). `tests/functions/test_fn_traps.py` runs them through the real verifier
and `benchmarks/fn_adequacy.py` counts how many pass (it must be none).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from speedproof.corpus.adequacy_audit import argument_names
from speedproof.functions.case import Case, benchmark_draws

Trap = Callable[[Case], str | None]


def _signature(case: Case) -> str:
    return case.reference_source.splitlines()[0]


def _args(case: Case) -> list[str]:
    return argument_names(case.reference_source, case.function_name)


def _with_prefix(case: Case, *lines: str) -> str:
    """The reference with `lines` run first (after its local facts, such as `m = 421`)."""
    return _inserted(case.reference_source, *lines)


def _inserted(source: str, *lines: str) -> str:
    """`source` with `lines` run first (after its local facts, such as `m = 421`)."""
    body = source.splitlines()
    at = 1
    while at < len(body) and " = " in body[at] and body[at].split(" = ")[1].isdigit():
        at += 1
    return "\n".join([*body[:at], *(f"    {line}" for line in lines), *body[at:]]) + "\n"


def return_zero(case: Case) -> str:
    return f"{_signature(case)}\n    return 0\n"


def return_empty(case: Case) -> str:
    return f"{_signature(case)}\n    return []\n"


def minus_one_per_query(case: Case) -> str | None:
    args = _args(case)
    if len(args) < 2:
        return None
    return f"{_signature(case)}\n    return [-1 for q in {args[1]}]\n"


def false_per_query(case: Case) -> str | None:
    args = _args(case)
    if len(args) < 2:
        return None
    return f"{_signature(case)}\n    return [False for q in {args[1]}]\n"


def size_band_shortcut(case: Case) -> str:
    """Right on short and very long inputs, a constant in between (40-400 items)."""
    first = _args(case)[0]
    return _with_prefix(case, f"if 40 <= len({first}) <= 400:", "    return 0")


def reads_a_prefix(case: Case) -> str:
    first = _args(case)[0]
    return _with_prefix(case, f"{first} = {first}[:30]")


def normalised_queries(case: Case) -> str | None:
    args = _args(case)
    if len(args) < 2 or "    m = " not in case.reference_source:
        return None
    return _with_prefix(case, f"{args[1]} = [q % m for q in {args[1]}]")


def memorised_benchmarks(case: Case) -> str:
    """Answers for the benchmark inputs of one draw (seed 1), looked up by length, first, last."""
    first = _args(case)[0]
    table: dict[str, object] = {}
    reference: dict[str, Any] = {}
    exec(case.reference_source, reference)  # a trusted corpus reference
    for args in benchmark_draws(case, 1):
        items = args[0]
        assert isinstance(items, list)
        head, tail = (items[0], items[-1]) if items else (None, None)
        table[f"{len(items)}:{head}:{tail}"] = reference[case.function_name](
            *json.loads(json.dumps(args))
        )
    key = (
        f"str(len({first})) + ':' + str({first}[0] if {first} else None) + ':' + "
        f"str({first}[-1] if {first} else None)"
    )
    return _with_prefix(
        case, f"table = {table!r}", f"key = {key}", "if key in table:", "    return table[key]"
    )


def answer_table(case: Case) -> str:
    """The reference with a 4,001-entry table of its per-item keys written out (ADR 0065): a
    table of precomputed answers compiled for free earned +4.36 before compiling was charged."""
    first = case.reference_source.partition("    m = ")[2].split("\n", 1)[0]
    modulus = int(first) if first.isdigit() else 1
    table = ", ".join(str(value % modulus) for value in range(4001))
    return _with_prefix(case, f"table = ({table})")


TRAPS: dict[str, Trap] = {
    "return-0": return_zero,
    "return-empty": return_empty,
    "minus-one-per-query": minus_one_per_query,
    "false-per-query": false_per_query,
    "size-band-shortcut": size_band_shortcut,
    "reads-a-prefix": reads_a_prefix,
    "normalised-queries": normalised_queries,
    "memorised-benchmarks": memorised_benchmarks,
    "answer-table": answer_table,
}
# Traps that fail on correctness (no Cachegrind run): cheap enough for every family in `make test`.
FAST_TRAPS = (
    "return-0",
    "return-empty",
    "minus-one-per-query",
    "size-band-shortcut",
    "answer-table",
)


# --- fast and wrong only outside the old draws ---------------------------------------------------
#
# Each of these is a family's known-fast source with one defect that corpus v2's draws never met,
# so it earned the fast source's reward there: ints in fixed bands (most within +-2000), lists up
# to 1.25x the benchmark size, query bounds >= 0, no floats, lengths drawn at random. A case's
# contract (`functions.contract`) makes the checker draw there.

FastTrap = Callable[[Case, str], str | None]


def clamps_bounds_at_the_end(case: Case, fast: str) -> str | None:
    """Prefix sums clamping a query bound with `min(q, n)` only (v2's own fast rewrite): a
    negative bound indexes the prefix sums from the end."""
    if case.family != "prefix_range_query":
        return None
    return fast.replace("min(max(q[0], 0), n)", "min(q[0], n)").replace(
        "min(max(q[1], 0), n)", "min(q[1], n)"
    )


def garbage_from_4096_items(case: Case, fast: str) -> str:
    first = _args(case)[0]
    return _inserted(fast, f"if len({first}) >= 4096:", "    return None")


def raises_past_4096_items(case: Case, fast: str) -> str:
    """A fixed-size table without a bounds check: an IndexError on 4,096 items or more."""
    first = _args(case)[0]
    return _inserted(fast, "table = [0] * 4096", f"table[len({first})] = 1")


def table_for_values_within_2000(case: Case, fast: str) -> str:
    """A lookup table over [-2000, 2000]: a value outside it wraps to another entry."""
    first = _args(case)[0]
    return _inserted(
        fast, f"{first} = [x if -2000 <= x <= 2000 else x % 4001 - 2000 for x in {first}]"
    )


def garbage_when_the_first_item_is_big(case: Case, fast: str) -> str:
    first = _args(case)[0]
    return _inserted(fast, f"if {first} and {first}[0] > 1000000:", "    return None")


def drops_float_items(case: Case, fast: str) -> str | None:
    """Float items dropped, where the contract allows them (a case without one: always)."""
    contract = getattr(case, "contract", None)  # None too on a case of an older format
    if contract is not None:
        item = getattr(contract.args[0], "item", None)
        if not getattr(item, "floats", False):
            return None
    first = _args(case)[0]
    return _inserted(fast, f"{first} = [x for x in {first} if isinstance(x, int)]")


def wrong_on_one_length_residue(case: Case, fast: str) -> str:
    """Wrong only when `len(xs) % 89 == 53`: a rare branch a random length seldom takes."""
    first = _args(case)[0]
    return _inserted(fast, f"if len({first}) % 89 == 53:", "    return None")


FAST_TRAPS_BY_CLASS: dict[str, FastTrap] = {
    "clamps-bounds-at-the-end": clamps_bounds_at_the_end,
    "garbage-from-4096-items": garbage_from_4096_items,
    "raises-past-4096-items": raises_past_4096_items,
    "table-for-values-within-2000": table_for_values_within_2000,
    "garbage-when-the-first-item-is-big": garbage_when_the_first_item_is_big,
    "drops-float-items": drops_float_items,
    "wrong-on-one-length-residue": wrong_on_one_length_residue,
}
