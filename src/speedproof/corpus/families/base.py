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
from speedproof.functions.case import InputSpec, IntSpec, Json, ListSpec, TupleSpec

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

    def bounds(self, lo: int, hi: int) -> tuple[int, int]:
        """Smallest and largest key over the values `lo..hi` (computed, never guessed)."""
        namespace: dict[str, object] = {}
        body = "".join(f"    {line}\n" for line in self.setup)
        exec(f"def key(v):\n{body}    return {self.key('v')}\n", namespace)  # trusted text
        key = namespace["key"]
        assert callable(key)
        keys = [int(key(v)) for v in range(lo, hi + 1)]
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
    inputs: Callable[[Knobs, int | None], InputSpec]
    edges: Callable[[Knobs], list[list[Json]]]
    ops: tuple[str, ...] = ("",)
    # Family literals: (name, lo, hi) base ranges, cut into split bands like the preludes'.
    slots: tuple[tuple[str, int, int], ...] = field(default=())

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


def int_list(lo: int, hi: int, min_len: int, max_len: int) -> ListSpec:
    return ListSpec(
        kind="list", item=IntSpec(kind="int", lo=lo, hi=hi), min_len=min_len, max_len=max_len
    )


def pair_list(lo: int, hi: int, min_len: int, max_len: int) -> ListSpec:
    item = IntSpec(kind="int", lo=lo, hi=hi)
    return ListSpec(
        kind="list",
        item=TupleSpec(kind="tuple", items=[item, item]),
        min_len=min_len,
        max_len=max_len,
    )


def sizes(size: int | None, small: int, ratio: float = 1.0) -> tuple[int, int]:
    """(min_len, max_len) of a list argument: 0..small for random inputs, exact for benchmarks."""
    if size is None:
        return 0, small
    n = max(1, int(size * ratio))
    return n, n


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
