"""`[variants]` of the manifest: how many inputs nobody has seen each workload is tried on."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from speedproof.judge.inputs.mutate.kinds import Kind

# How a twin's inputs are made (`Workload.twin`): "mutated", every record kept and most of them
# changed by the mutator of their kind (docs/adr/0058), the default; "lines", the same lines less
# a random twentieth after the first (docs/adr/0048); "copy", the same bytes under fresh names.
# A workload's `mutator` names its inputs' kind (lines, csv, json, jsonl, binary, none) where
# reading it from each file's suffix and bytes would go wrong; "none" makes no variants of them
# and a mutated twin of them a copy.
TwinKind = Literal["copy", "lines", "mutated"]

# 20 variants take each field edit and each record change of the mutators through every pairing
# once (inputs/mutate/make.py).
COUNT_DEFAULT = 20
# Seconds the variants of one judgement may take, both sides. textstat's 112 variants took 124 s
# on a 2-vCPU machine shared at load 25 (docs/adr/0057): a budget a loaded machine still meets,
# since running out of it makes the verdict inconclusive.
BUDGET_S_DEFAULT = 300.0


__all__ = ["Kind", "TwinKind", "VariantSettings"]


class VariantSettings(BaseModel):
    """Variants made per workload that declares inputs (`count`; 0 turns the gate off), the
    seconds they may take (`budget_s`), and how many of them must have run for a candidate to
    be accepted (`minimum`, `count` unless lowered): fewer is an inconclusive verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int = Field(default=COUNT_DEFAULT, ge=0, le=1000)
    budget_s: float = Field(default=BUDGET_S_DEFAULT, gt=0)
    minimum: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _minimum_within_count(self) -> VariantSettings:
        if self.minimum is not None and self.minimum > self.count:
            raise ValueError(f"minimum ({self.minimum}) must be at most count ({self.count})")
        return self

    @property
    def required(self) -> int:
        """Variants a workload must have run for an accept."""
        return self.count if self.minimum is None else self.minimum
