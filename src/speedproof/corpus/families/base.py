"""What a transformation family is: templates (loop structures), preludes (local facts), inputs.

A template renders a slow reference and a known-fast rewrite from `Knobs`: the prelude (the
"required local fact", e.g. `m = 421` and the normalisation `x % m`), an operation variant and the
family's own literals. Templates of one family differ in loop structure, not only in names; the
audit checks that with `skeleton.loop_skeleton`.
"""

from __future__ import annotations

import random
import string
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from speedproof.corpus.literals import SplitName, draw
from speedproof.functions.case import (
    ChoiceSpec,
    InputSpec,
    IntSpec,
    Json,
    ListSpec,
    Scale,
    TupleSpec,
)
from speedproof.functions.contract import SWEEP, ArgContract, Contract, IntArg, ListArg, TupleArg
from speedproof.functions.draws import LANDMARKS

# Base ranges of the prelude literals (cut into split bands by `literals.band`).
MODULUS = (100, 899)
WIDTH = (2, 41)
SCALE = (2, 41)
SHIFT = (100, 899)
MASK = (64, 1023)


@dataclass(frozen=True)
class Prelude:
    """A local fact the rewrite must carry: setup lines and the key expression using them."""

    kind: str
    setup: tuple[str, ...]
    expr: str  # with `{v}` where the value goes
    literals: tuple[int, ...]

    def key(self, v: str) -> str:
        return self.expr.format(v=v)

    def pkey(self, v: str) -> str:
        """The key in parentheses, for use inside a larger arithmetic expression."""
        return f"({self.key(v)})"

    def key_function(self) -> Callable[[int], int]:
        """The key as a Python function (trusted text: the prelude's own setup and expression)."""
        namespace: dict[str, object] = {}
        body = "".join(f"    {line}\n" for line in self.setup)
        exec(f"def key(v):\n{body}    return {self.key('v')}\n", namespace)  # trusted text
        key = namespace["key"]
        assert callable(key)
        return lambda v: int(key(v))

    def bounds(self, lo: int, hi: int) -> tuple[int, int]:
        """Smallest and largest key over the values `lo..hi` (computed, never guessed)."""
        key = self.key_function()
        keys = [key(v) for v in range(lo, hi + 1)]
        return min(keys), max(keys)


def _prelude(kind: str, rng: random.Random, split: SplitName) -> Prelude:
    if kind == "mod":
        m = draw(rng, *MODULUS, split)
        return Prelude(kind, (f"m = {m}",), "{v} % m", (m,))
    if kind == "absmod":
        m = draw(rng, *MODULUS, split)
        return Prelude(kind, (f"m = {m}",), "({v} if {v} >= 0 else -{v}) % m", (m,))
    if kind == "bucket":
        w = draw(rng, *WIDTH, split)
        return Prelude(kind, (f"width = {w}",), "{v} // width", (w,))
    if kind == "affine":
        a = draw(rng, *SCALE, split)
        b = draw(rng, *SHIFT, split)
        return Prelude(kind, (f"scale = {a}", f"shift = {b}"), "{v} * scale + shift", (a, b))
    if kind == "xor":
        k = draw(rng, *MASK, split)
        return Prelude(kind, (f"mask = {k}",), "{v} ^ mask", (k,))
    raise ValueError(f"unknown prelude kind {kind!r}")


PRELUDE_KINDS = ("mod", "absmod", "bucket", "affine", "xor")


def make_prelude(kind: str, rng: random.Random, split: SplitName) -> Prelude:
    """A prelude of `kind` with literals from `split`'s bands."""
    return _prelude(kind, rng, split)


@dataclass(frozen=True)
class Knobs:
    """Everything a template needs to render one pair."""

    prelude: Prelude
    op: str = ""
    params: tuple[tuple[str, int], ...] = ()

    def p(self, name: str) -> int:
        for key, value in self.params:
            if key == name:
                return value
        raise KeyError(f"knob {name!r} is not set")

    @property
    def literals(self) -> tuple[int, ...]:
        return self.prelude.literals + tuple(value for _, value in self.params)


Render = Callable[[Knobs], str]


@dataclass(frozen=True)
class Template:
    """One loop structure of a family. `role` is the only split it may appear in."""

    id: str
    role: SplitName
    slow: Render
    fast: Render
    bench_n: int


@dataclass(frozen=True)
class Family:
    name: str
    seen: bool
    preludes: tuple[str, ...]
    templates: tuple[Template, ...]
    inputs: Callable[[Knobs, Size], InputSpec]
    edges: Callable[[Knobs], list[list[Json]]]
    ops: tuple[str, ...] = ("",)
    # Family literals: (name, lo, hi) base ranges, cut into split bands like the preludes'.
    slots: tuple[tuple[str, int, int], ...] = field(default=())
    # The family's interesting branch (a hit, a duplicate, a reachable target, an out-of-range
    # query), judged from one input and the reference's output on it, and the share of random
    # inputs on which it must happen: the corpus audit measures it per case.
    hit: Callable[[list[Json], Json], bool] | None = None
    hit_share: tuple[float, float] = (0.25, 0.95)
    # The preconditions on the inputs, one per argument, and notes in words: the same for every
    # template of the family (each template must agree with the others on all of it).
    contract: Callable[[Knobs], ContractArgs] | None = None

    def templates_for(self, split: SplitName) -> tuple[Template, ...]:
        return tuple(t for t in self.templates if t.role == split)

    def knobs(self, rng: random.Random, split: SplitName, index: int) -> Knobs:
        """Preludes and ops cycle with the case index (coverage); literals are drawn."""
        kind = self.preludes[index % len(self.preludes)]
        op = self.ops[(index // len(self.preludes)) % len(self.ops)]
        prelude = make_prelude(kind, rng, split)
        params = tuple((name, draw(rng, lo, hi, split)) for name, lo, hi in self.slots)
        return Knobs(prelude=prelude, op=op, params=params)


def render(knobs: Knobs, signature: str, body: str, **subs: str) -> str:
    """`def solve(signature):`, the prelude's setup lines, then `body` with `$name` substituted."""
    text = string.Template(textwrap.dedent(body).strip("\n")).substitute(**subs)
    lines = [f"def solve({signature}):"]
    lines += [f"    {line}" for line in knobs.prelude.setup]
    lines += [f"    {line}" if line else "" for line in text.splitlines()]
    return "\n".join(lines) + "\n"


def int_list(lo: int, hi: int, min_len: int, max_len: int, scale: Scale = "uniform") -> ListSpec:
    return ListSpec(
        kind="list",
        item=IntSpec(kind="int", lo=lo, hi=hi),
        min_len=min_len,
        max_len=max_len,
        scale=scale,
    )


def pair_list(lo: int, hi: int, min_len: int, max_len: int, scale: Scale = "uniform") -> ListSpec:
    item = IntSpec(kind="int", lo=lo, hi=hi)
    return ListSpec(
        kind="list",
        item=TupleSpec(kind="tuple", items=[item, item]),
        min_len=min_len,
        max_len=max_len,
        scale=scale,
    )


@dataclass(frozen=True)
class Size:
    """How long a case's list arguments are: exactly `n` (a benchmark input) or random.

    Random inputs run from empty to a quarter beyond the benchmark size, log-uniformly: in corpus
    v1 they stopped at 20-30 while benchmarks were 95-310 long, so a candidate that was wrong only
    between the two (or above) was never caught.
    """

    n: int
    exact: bool = True

    @classmethod
    def random(cls, bench_n: int) -> Size:
        return cls(bench_n + bench_n // 4, exact=False)


# A narrow value band for random inputs: about 12 distinct keys under the case's prelude, so that
# on inputs of a few items duplicates and hits are the rule, not the exception (on v1's 6001-wide
# bands a 20-item input repeated a key about one time in thirty; with 31 keys a 5-item input hit
# a query one time in six and `return 0` matched 57 % of a membership case's inputs). A bucket
# prelude of width 41 needs values over about +-250 to make 12 keys; a modulus, 13 values.
DENSE_KEYS = 12


def dense_band(prelude: Prelude) -> tuple[int, int]:
    """The narrowest band [-r, r] whose values have at least `DENSE_KEYS` distinct keys."""
    key = prelude.key_function()
    radius = 1
    while len({key(v) for v in range(-radius, radius + 1)}) < DENSE_KEYS and radius < 5000:
        radius += max(1, radius // 4)
    return -radius, radius


def dense_list(prelude: Prelude, size: Size) -> ListSpec:
    lo, hi = dense_band(prelude)
    return int_list(lo, hi, *sizes(size))


def dense_keys(prelude: Prelude) -> list[int]:
    """Every key of the dense band, plus three keys none of its values has (so queries miss)."""
    key = prelude.key_function()
    lo, hi = dense_band(prelude)
    keys = sorted({key(v) for v in range(lo, hi + 1)})
    misses = [keys[0] - 1, keys[-1] + 1, keys[-1] + 2]
    return keys + [m for m in misses if m not in keys]


def choice_list(values: list[int], min_len: int, max_len: int, scale: Scale) -> ListSpec:
    return ListSpec(
        kind="list",
        item=ChoiceSpec(kind="choice", values=list(values)),
        min_len=min_len,
        max_len=max_len,
        scale=scale,
    )


def dense_then_wide(size: Size, dense: InputSpec, wide: InputSpec, share: int = 2) -> InputSpec:
    """Random inputs: `share` in `share + 1` from the dense band, the rest wide; benchmarks wide."""
    return wide if size.exact else InputSpec(mix=[*[dense] * share, wide])


def at_least(size: Size, wide: InputSpec, longer: InputSpec) -> InputSpec:
    """Random inputs: half as drawn, half from `longer` (lists long enough for the main branch)."""
    return wide if size.exact else InputSpec(mix=[wide, longer])


def sizes(size: Size, ratio: float = 1.0, least: int = 0) -> tuple[int, int, Scale]:
    """(min_len, max_len, scale) of a list argument `ratio` times as long as the main one;
    random ones are at least `least` long."""
    n = max(1, int(size.n * ratio))
    return (n, n, "uniform") if size.exact else (least, max(least, n), "log")


# Operation variants: (initial-free) binary combination as an expression without calls, so the
# loop skeleton of a template does not depend on which aggregate the case asks for.
COMBINE = {
    "sum": "$a + $b",
    "max": "$b if $b > $a else $a",
    "min": "$b if $b < $a else $a",
}
BUILTIN = {"sum": "sum", "max": "max", "min": "min"}


def combine(op: str, a: str, b: str) -> str:
    return string.Template(COMBINE[op]).substitute(a=a, b=b)


# --- contracts ----------------------------------------------------------------------------------

ContractArgs = tuple[list[ArgContract], list[str]]

# The contract's ranges: ints up to 10^18 in magnitude (far past any band a draw used to stay in,
# and still exact in JSON), floats up to 10^9 where the reference takes them, lists up to 4,096
# items. 4,096 is where the slowest reference stays affordable: complement lookup's `index_while`
# takes 1.1 s of CPU on 4,100 items, against the harness's 2 s for all inputs of a run.
BIG = 10**18
FLOAT = 1e9
MAX_ITEMS = 4096


def int_item(floats: bool = False) -> IntArg:
    if not floats:
        return IntArg(kind="int", lo=-BIG, hi=BIG)
    return IntArg(kind="int", lo=-BIG, hi=BIG, floats=True, float_lo=-FLOAT, float_hi=FLOAT)


def items(item: ArgContract | None = None, max_len: int = MAX_ITEMS) -> ListArg:
    return ListArg(kind="list", item=item or int_item(), min_len=0, max_len=max_len)


def pairs() -> ListArg:
    return items(TupleArg(kind="tuple", items=[int_item(), int_item()]))


def query_item(k: Knobs) -> IntArg:
    """An int query, drawn often from the keys of the values items are often drawn with (the
    range's ends, the landmarks, small values): a query independent of the items would almost
    never hit, and a candidate wrong only on the items it mishandles would go unseen."""
    key = k.prelude.key_function()
    values = [-BIG, BIG, -BIG + 1, BIG - 1, *LANDMARKS, *range(-64, 65)]
    keys = sorted({key(v) for v in values})
    # An affine key of 10^18 is past 10^18: the range widens to hold every pooled key.
    return IntArg(kind="int", lo=min(-BIG, keys[0]), hi=max(BIG, keys[-1]), pool=keys)


def takes_floats(k: Knobs) -> bool:
    """Whether the prelude's key is defined on floats (`^` is not) and equal-valued floats key
    equal to ints (so a set or dict of keys agrees with a scan comparing them with `==`)."""
    return k.prelude.kind != "xor"


def contract_sizes(bench_n: int) -> list[int]:
    """Lengths drawn beyond the sweep: half, twice (plus one) the benchmark size, and the top."""
    wanted = {bench_n // 2, 2 * bench_n + 1, MAX_ITEMS}
    return sorted(size for size in wanted if SWEEP < size <= MAX_ITEMS)


def make_contract(family: Family, knobs: Knobs, names: list[str], bench_n: int) -> Contract | None:
    """The case's contract, or None for a family without one."""
    if family.contract is None:
        return None
    args, notes = family.contract(knobs)
    return Contract(names=names, args=args, sizes=contract_sizes(bench_n), notes=notes)
