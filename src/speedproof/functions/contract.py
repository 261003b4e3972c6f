"""A case's contract: the preconditions on its inputs, stated once, shown to the model, enforced.

The reference is a program, and a program is defined far beyond the value bands a checker
happens to draw from. Corpus v2 drew ints in fixed bands, lists up to 1.25x the benchmark size
and query bounds >= 0; candidates wrong outside those (negative bounds, 4,096 items, values over
10^6, float items) were paid. A contract names, per argument, the types, the value ranges and the
sizes on which the reference is the specification: the model reads it in the prompt, and the
checker draws over all of it and its boundaries (`functions.draws`). Outside the contract a
candidate may do anything; inside it, it must agree with the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

_STRICT = ConfigDict(extra="forbid", frozen=True)


class IntArg(BaseModel):
    """An int in [lo, hi]; with `floats`, a finite float in [float_lo, float_hi] is allowed too."""

    model_config = _STRICT
    kind: Literal["int"]
    lo: int
    hi: int
    floats: bool = False
    float_lo: float = 0.0
    float_hi: float = 0.0
    # Values drawn more often, not a precondition (never shown): for queries, the keys of the
    # values the other arguments are often drawn with, so that a query hits on most inputs.
    pool: list[int] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.lo > self.hi:
            raise ValueError(f"int contract has lo {self.lo} > hi {self.hi}")
        if self.floats and self.float_lo > self.float_hi:
            raise ValueError(f"int contract has float_lo {self.float_lo} > {self.float_hi}")
        return self


class ListArg(BaseModel):
    """A list of `min_len` to `max_len` items, each following `item`."""

    model_config = _STRICT
    kind: Literal["list"]
    item: ArgContract
    min_len: int = Field(ge=0)
    max_len: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min_len > self.max_len:
            raise ValueError(f"list contract has min_len {self.min_len} > {self.max_len}")
        return self


class TupleArg(BaseModel):
    """A fixed-length list (JSON has no tuples) whose i-th item follows `items[i]`."""

    model_config = _STRICT
    kind: Literal["tuple"]
    items: list[ArgContract] = Field(min_length=1)


ArgContract = Annotated[IntArg | ListArg | TupleArg, Field(discriminator="kind")]
ListArg.model_rebuild()
TupleArg.model_rebuild()

# Every list length from 0 to SWEEP is drawn once for the first list argument: every residue of
# every modulus up to SWEEP + 1 (101) then occurs, so a candidate wrong only on one residue class
# of the length (`len(xs) % 89 == 53`) meets it on every verification, not on a random share.
SWEEP = 100


class Contract(BaseModel):
    """The preconditions of a case's inputs: one `ArgContract` per positional argument.

    `sizes` are the extra lengths of the first list argument, beyond the 0..`sweep` sweep, that
    every verification draws (below, at and well above the benchmark size, and the contract's
    largest); `notes` state in words what the types cannot (e.g. what a reversed range means).
    """

    model_config = _STRICT
    names: list[str] = Field(min_length=1)
    args: list[ArgContract] = Field(min_length=1)
    sweep: int = Field(default=SWEEP, ge=0)
    sizes: list[int] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if len(self.names) != len(self.args):
            raise ValueError(f"contract names {len(self.names)} arguments but has {len(self.args)}")
        main = self.main
        if main is None:
            if self.sizes:
                raise ValueError("contract sizes need a list argument")
            return self
        arg = self.args[main]
        assert isinstance(arg, ListArg)
        for size in [*self.sizes, min(self.sweep, arg.max_len)]:
            if not arg.min_len <= size <= arg.max_len:
                raise ValueError(f"contract size {size} is outside [{arg.min_len}, {arg.max_len}]")
        return self

    @property
    def main(self) -> int | None:
        """The index of the first list argument: the one whose length is swept."""
        for index, arg in enumerate(self.args):
            if isinstance(arg, ListArg):
                return index
        return None


def violation(arg: ArgContract, value: object) -> str | None:
    """Why `value` breaks `arg`, or None when it keeps it (bools are not ints here)."""
    if isinstance(arg, IntArg):
        if isinstance(value, int) and not isinstance(value, bool):
            return (
                None if arg.lo <= value <= arg.hi else f"int {value} outside [{arg.lo}, {arg.hi}]"
            )
        if isinstance(value, float) and arg.floats:
            inside = arg.float_lo <= value <= arg.float_hi
            return None if inside else f"float {value} outside [{arg.float_lo}, {arg.float_hi}]"
        return f"{type(value).__name__} where an int is required"
    if not isinstance(value, list):
        return f"{type(value).__name__} where a list is required"
    if isinstance(arg, TupleArg):
        if len(value) != len(arg.items):
            return f"{len(value)} items where exactly {len(arg.items)} are required"
        found = (violation(item, part) for item, part in zip(arg.items, value, strict=True))
        return next((v for v in found if v is not None), None)
    if not arg.min_len <= len(value) <= arg.max_len:
        return f"{len(value)} items outside [{arg.min_len}, {arg.max_len}]"
    return next((v for v in (violation(arg.item, part) for part in value) if v is not None), None)


def input_violation(contract: Contract, args: Sequence[object]) -> str | None:
    """Why an argument list breaks the contract (naming the argument), or None."""
    if len(args) != len(contract.args):
        return f"{len(args)} arguments where the contract has {len(contract.args)}"
    for name, arg, value in zip(contract.names, contract.args, args, strict=True):
        found = violation(arg, value)
        if found is not None:
            return f"`{name}`: {found}"
    return None


def _int_text(arg: IntArg) -> str:
    text = f"an int from {arg.lo} to {arg.hi}"
    if arg.floats:
        text += f", or a float from {arg.float_lo:g} to {arg.float_hi:g}"
    return text


def describe_arg(arg: ArgContract) -> str:
    """One argument's contract in plain words."""
    if isinstance(arg, IntArg):
        return _int_text(arg)
    if isinstance(arg, ListArg):
        return f"a list of {arg.min_len} to {arg.max_len} items, each {describe_arg(arg.item)}"
    parts = "; ".join(describe_arg(item) for item in arg.items)
    return f"a list of exactly {len(arg.items)} items ({parts})"


def describe(contract: Contract) -> str:
    """The contract as the model reads it: one line per argument, then the notes."""
    lines = [
        f"- `{name}`: {describe_arg(arg)}"
        for name, arg in zip(contract.names, contract.args, strict=True)
    ]
    lines += [f"- {note}" for note in contract.notes]
    return "\n".join(lines)
