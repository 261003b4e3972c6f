"""A function-mode case: one restricted pure-Python function, its inputs, and what a model may see.

A case holds the slow reference source, fixed edge and benchmark inputs and a spec from which
random inputs are drawn fresh on every evaluation. The known-fast source never enters a case: the
trusted generator keeps it. `model_view` is the one function that builds what a model may see, so
there is exactly one place where a leak of inputs into a prompt could happen, and a test guards it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import hashlib
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from speedproof.functions.contract import Contract, describe, input_violation

Json = JsonValue
"""A strict JSON value: None, bool, int, finite float, str, list, dict with str keys."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class IntSpec(BaseModel):
    """A uniformly drawn int in [lo, hi]."""

    model_config = _STRICT
    kind: Literal["int"]
    lo: int
    hi: int

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.lo > self.hi:
            raise ValueError(f"int spec has lo {self.lo} > hi {self.hi}")
        return self


Scale = Literal["uniform", "log"]
"""How a length is drawn: uniformly, or log-uniformly so that short, middling and long inputs are
all common (lengths 0–400 drawn uniformly are under 40 only one time in ten; log-uniformly, about
six times in ten, while a tenth still exceed 220)."""


class StrSpec(BaseModel):
    """A string whose length is drawn on `scale` and whose characters come from `alphabet`."""

    model_config = _STRICT
    kind: Literal["str"]
    alphabet: str
    min_len: int = Field(ge=0)
    max_len: int = Field(ge=0)
    scale: Scale = "uniform"

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min_len > self.max_len:
            raise ValueError(f"str spec has min_len {self.min_len} > max_len {self.max_len}")
        if not self.alphabet and self.max_len > 0:
            raise ValueError("str spec has an empty alphabet but a positive max_len")
        return self


class ListSpec(BaseModel):
    """A list whose length is drawn on `scale` and whose items follow `item`."""

    model_config = _STRICT
    kind: Literal["list"]
    item: Spec
    min_len: int = Field(ge=0)
    max_len: int = Field(ge=0)
    scale: Scale = "uniform"

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min_len > self.max_len:
            raise ValueError(f"list spec has min_len {self.min_len} > max_len {self.max_len}")
        return self


class TupleSpec(BaseModel):
    """A fixed-length JSON list whose i-th item follows `items[i]` (JSON has no tuples)."""

    model_config = _STRICT
    kind: Literal["tuple"]
    items: list[Spec]


class ChoiceSpec(BaseModel):
    """One of `values`, uniformly chosen (deep-copied, so draws never share structure)."""

    model_config = _STRICT
    kind: Literal["choice"]
    values: list[Json] = Field(min_length=1)

    @model_validator(mode="after")
    def _finite(self) -> Self:
        _require_finite(self.values, "choice values")
        return self


Spec = Annotated[
    IntSpec | StrSpec | ListSpec | TupleSpec | ChoiceSpec,
    Field(discriminator="kind"),
]
ListSpec.model_rebuild()
TupleSpec.model_rebuild()


class InputSpec(BaseModel):
    """One random input is a list of positional arguments, the i-th drawn from `args[i]`.

    With `mix`, each input first picks one of the listed specs uniformly and draws from it: a
    family states several value bands (say, dense keys where hits are common and sparse ones
    where they are rare) so that every branch of the reference is taken on a known share.
    """

    model_config = _STRICT
    args: list[Spec] = Field(default_factory=list)
    mix: list[InputSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if self.mix and self.args:
            raise ValueError("an input spec has either args or mix, not both")
        return self


class Case(BaseModel):
    """One function-mode problem. `ast_hash` must equal `ast_hash(reference_source)`."""

    model_config = _STRICT
    id: str = Field(min_length=1)
    family: str = Field(min_length=1)
    template: str = Field(min_length=1)
    function_name: str = "solve"
    reference_source: str
    edge_inputs: list[list[Json]]
    benchmark_inputs: list[list[Json]] = Field(default_factory=list)
    benchmark_specs: list[InputSpec] = Field(default_factory=list)
    input_spec: InputSpec
    ast_hash: str
    # The preconditions on the inputs (corpus v3 on): shown to the model, drawn over in full.
    contract: Contract | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if bool(self.benchmark_inputs) == bool(self.benchmark_specs):
            raise ValueError(
                f"case {self.id!r} needs exactly one of benchmark_inputs (fixed, corpus v1) and "
                "benchmark_specs (drawn afresh from each verification's seed)"
            )
        for args in [*self.edge_inputs, *self.benchmark_inputs]:
            _require_finite(list(args), f"case {self.id!r} inputs")
            # An input outside the contract would judge a candidate on what it was promised
            # it never gets.
            broken = None if self.contract is None else input_violation(self.contract, args)
            if broken is not None:
                raise ValueError(f"case {self.id!r}: a fixed input breaks its contract: {broken}")
        expected = ast_hash(self.reference_source)
        if self.ast_hash != expected:
            raise ValueError(
                f"case {self.id!r}: ast_hash does not match reference_source "
                f"(stored {self.ast_hash[:12]}…, computed {expected[:12]}…)"
            )
        return self


class ModelView(BaseModel):
    """Everything a model may see of a case, and nothing else."""

    model_config = _STRICT
    id: str
    family: str
    template: str
    function_name: str
    reference_source: str
    contract: str | None = None


def model_view(case: Case) -> ModelView:
    """The one function producing model-facing data: no inputs, no seeds, no known-fast source.

    The contract is shown in words: it is the specification's domain, not a hidden input.
    """
    return ModelView(
        id=case.id,
        family=case.family,
        template=case.template,
        function_name=case.function_name,
        reference_source=case.reference_source,
        contract=None if case.contract is None else describe(case.contract),
    )


def _require_finite(value: Json, where: str) -> None:
    """JSON has no NaN or infinity; an input holding one would make equality meaningless."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} holds a non-finite float")
    if isinstance(value, list):
        for item in value:
            _require_finite(item, where)
    elif isinstance(value, dict):
        for item in value.values():
            _require_finite(item, where)


# --- random inputs ------------------------------------------------------------------------------


def _length(spec: StrSpec | ListSpec, rng: random.Random) -> int:
    if spec.scale == "uniform" or spec.min_len == spec.max_len:
        return rng.randint(spec.min_len, spec.max_len)
    # Log-uniform over [min_len + 1, max_len + 2), floored and shifted back by one, so that both
    # 0 and max_len stay reachable.
    low, high = math.log(spec.min_len + 1), math.log(spec.max_len + 2)
    return min(spec.max_len, max(spec.min_len, int(math.exp(rng.uniform(low, high))) - 1))


def _draw(spec: IntSpec | StrSpec | ListSpec | TupleSpec | ChoiceSpec, rng: random.Random) -> Json:
    if isinstance(spec, IntSpec):
        return rng.randint(spec.lo, spec.hi)
    if isinstance(spec, StrSpec):
        length = _length(spec, rng)
        return "".join(rng.choice(spec.alphabet) for _ in range(length))
    if isinstance(spec, ListSpec):
        length = _length(spec, rng)
        return [_draw(spec.item, rng) for _ in range(length)]
    if isinstance(spec, TupleSpec):
        return [_draw(item, rng) for item in spec.items]
    return copy.deepcopy(rng.choice(spec.values))


def draw_input(spec: InputSpec, rng: random.Random) -> list[Json]:
    """One argument list: from a uniformly chosen `mix` entry when the spec has one."""
    if spec.mix:
        return draw_input(rng.choice(spec.mix), rng)
    return [_draw(arg, rng) for arg in spec.args]


def generate_inputs(spec: InputSpec, seed: int, count: int) -> list[list[Json]]:
    """`count` random inputs (argument lists), the same for the same seed on every machine."""
    rng = random.Random(seed)
    return [draw_input(spec, rng) for _ in range(count)]


def benchmark_draws(case: Case, seed: int) -> list[list[Json]]:
    """The benchmark inputs of one verification.

    A v1 case has fixed ones; a v2 case draws them from its specs with a stream of its own per
    seed, so that no two verifications share them (they cannot be memorised) while one seed
    always gives the same inputs and therefore the same reward.
    """
    if case.benchmark_inputs:
        return copy.deepcopy(case.benchmark_inputs)
    return [
        draw_input(spec, random.Random(f"benchmark:{seed}:{index}"))
        for index, spec in enumerate(case.benchmark_specs)
    ]


@dataclass(frozen=True)
class VerificationInputs:
    """Every input of one verification, in order, with the class each belongs to."""

    values: list[list[Json]]
    classes: list[InputClass]
    benchmark: slice


InputClass = Literal["edge", "random", "contract", "benchmark"]


def verification_inputs(case: Case, seed: int, random_count: int) -> VerificationInputs:
    """What the verifier checks for one seed: edge, random, contract, then benchmark inputs.

    The one place that decides it, so that the corpus audit measures the inputs the verifier
    really uses. A case with a contract adds the draws over its whole contract
    (`draws.contract_inputs`), from the same seed.
    """
    from speedproof.functions.draws import contract_inputs

    drawn = [] if case.contract is None else contract_inputs(case.contract, seed)
    groups: list[tuple[InputClass, list[list[Json]]]] = [
        ("edge", copy.deepcopy(case.edge_inputs)),
        ("random", generate_inputs(case.input_spec, seed, random_count)),
        ("contract", drawn),
        ("benchmark", benchmark_draws(case, seed)),
    ]
    values: list[list[Json]] = []
    classes: list[InputClass] = []
    for name, group in groups:
        values += group
        classes += [name] * len(group)
    start = len(values) - len(groups[-1][1])
    return VerificationInputs(values, classes, slice(start, len(values)))


# --- normalised source hash ---------------------------------------------------------------------

_BUILTIN_NAMES = frozenset(dir(builtins))


def _drop_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return body[1:] or [ast.Pass()]
    return body


class _Bound(ast.NodeVisitor):
    """Collects every name the source binds: functions, arguments, assigned and loop names."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.add(node.name)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self.names.add(node.arg)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.names.add(node.id)


class _Renamer(ast.NodeTransformer):
    """Renames bound names to v0, v1, … in traversal order; builtins and free names stay."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.mapping: dict[str, str] = {}

    def _name(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.mapping.setdefault(name, f"v{len(self.mapping)}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        node.body = _drop_docstring(node.body)
        node.returns = None
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        # `x: int = 3` and `x = 3` are the same program for the leakage audit.
        if node.value is None:
            return ast.Pass()
        return self.generic_visit(ast.Assign(targets=[node.target], value=node.value, lineno=0))


def ast_hash(source: str) -> str:
    """SHA-256 of the alpha-renamed AST without docstrings or annotations.

    Two functions that differ only in identifier names (function, arguments, locals), docstrings,
    annotations or formatting hash equal; builtins and attribute (method) names are kept, because
    `sorted` and `min` are different programs. Raises SyntaxError on unparsable source.
    """
    tree = ast.parse(source)
    tree.body = _drop_docstring(tree.body)
    collector = _Bound()
    collector.visit(tree)
    renamed = _Renamer(collector.names).visit(tree)
    dumped = ast.dump(renamed, annotate_fields=True, include_attributes=False)
    return hashlib.sha256(dumped.encode("utf-8")).hexdigest()


# --- files --------------------------------------------------------------------------------------


def load_case(path: Path | str) -> Case:
    """Read one case from a JSON file; unknown keys and a stale `ast_hash` are errors."""
    return Case.model_validate_json(Path(path).read_text(encoding="utf-8"))


def save_case(case: Case, path: Path | str) -> None:
    """Write one case as indented JSON (the form `load_case` reads)."""
    Path(path).write_text(case.model_dump_json(indent=2) + "\n", encoding="utf-8")


def make_case(
    *,
    id: str,
    family: str,
    template: str,
    reference_source: str,
    edge_inputs: list[list[Json]],
    input_spec: InputSpec,
    benchmark_inputs: list[list[Json]] | None = None,
    benchmark_specs: list[InputSpec] | None = None,
    function_name: str = "solve",
    contract: Contract | None = None,
) -> Case:
    """Build a case, computing `ast_hash` from the reference source."""
    return Case(
        id=id,
        family=family,
        template=template,
        function_name=function_name,
        reference_source=reference_source,
        edge_inputs=edge_inputs,
        benchmark_inputs=benchmark_inputs or [],
        benchmark_specs=benchmark_specs or [],
        input_spec=input_spec,
        ast_hash=ast_hash(reference_source),
        contract=contract,
    )
