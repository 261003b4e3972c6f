"""The JSON answers the five model roles give, as strict pydantic schemas.

Every schema forbids extra keys: a model that invents a field is told so by name in the repair
turn instead of having the field silently dropped. The optimizer answer carries one of three edit
kinds; a validator insists on exactly the fields of that kind, so a half-filled answer (a function
edit without its source, a diff with stray blocks) is rejected before any code touches a file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Cause = Literal[
    "allocation",
    "unbuffered_io",
    "string_building",
    "fast_path",
    "superlinear",
    "preallocation",
    "repeated_work",
    "other",
]
EditKind = Literal["function", "search_replace", "diff"]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CoordinatorAnswer(_Answer):
    """Which hot function the campaign attacks next, and why.

    An empty `function` means "nothing left to try": the campaign ends with that exit condition.
    """

    function: str
    rationale: str


class ProposedWorkload(_Answer):
    """An extra workload for profiling only; never measured for a verdict."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    args: list[str]
    rationale: str


class ExplorerAnswer(_Answer):
    """At most 5 extra workloads: enough to widen a profile, few enough to run cheaply."""

    workloads: list[ProposedWorkload] = Field(max_length=5)


class CauseClaim(_Answer):
    """One likely reason a hot function is slow."""

    function: str = Field(min_length=1)
    cause: Cause
    evidence: str
    confidence: float = Field(ge=0.0, le=1.0)


class AnalystAnswer(_Answer):
    """Likely causes per hot function."""

    causes: list[CauseClaim]


class SearchReplace(_Answer):
    """Replace one exact occurrence of `search` in `file` (relative to the target folder)."""

    file: str = Field(min_length=1)
    search: str = Field(min_length=1)
    replace: str


_FUNCTION_FIELDS = ("file", "function", "source", "preamble", "imports")
_REQUIRED: dict[str, tuple[str, ...]] = {
    "function": ("function", "source"),
    "search_replace": ("blocks",),
    "diff": ("diff",),
}
_ALLOWED: dict[str, tuple[str, ...]] = {
    "function": _FUNCTION_FIELDS,
    "search_replace": ("blocks",),
    "diff": ("diff",),
}


class OptimizerAnswer(_Answer):
    """One small behaviour-preserving change, as a whole function, search/replace blocks or a
    unified diff. Hunk positions are never trusted from a model: code computes the final diff."""

    hypothesis: str = Field(min_length=1)
    rule: str | None = None
    kind: EditKind
    file: str | None = None
    function: str | None = None
    source: str | None = None
    preamble: str | None = None
    imports: list[str] = Field(default_factory=list)
    blocks: list[SearchReplace] = Field(default_factory=list)
    diff: str | None = None

    @model_validator(mode="after")
    def _fields_match_kind(self) -> OptimizerAnswer:
        for name in _REQUIRED[self.kind]:
            if not getattr(self, name):
                raise ValueError(f"field {name!r} is required for kind {self.kind!r}")
        for name in ("file", "function", "source", "preamble", "imports", "blocks", "diff"):
            if name not in _ALLOWED[self.kind] and getattr(self, name):
                raise ValueError(f"field {name!r} does not belong to kind {self.kind!r}")
        return self


class Concern(_Answer):
    """One reason the reviewed change might alter behaviour."""

    severity: Literal["low", "medium", "high"]
    text: str = Field(min_length=1)


class ReviewerAnswer(_Answer):
    """The reviewer's case against a candidate change."""

    concerns: list[Concern]
    recommendation: Literal["proceed", "reconsider"]
