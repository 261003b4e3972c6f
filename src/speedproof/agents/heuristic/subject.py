"""What a heuristic rule looks at, and what it hands back.

A rule examines one hot function. The optimizer also gives it the whole file at the base
revision, so module-level facts (what a name is bound to, which imports exist) can be checked;
the coordinator and the analyst see the function alone, so a rule reports only whether its
pattern is present, marking a finding `certain=False` when it rests on a module-level fact it
cannot see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from speedproof.agents.answers import Cause, OptimizerAnswer
from speedproof.agents.providers.base import ProviderError
from speedproof.source.function import SourceFunction

T = TypeVar("T")


class RewriteDeclined(Exception):
    """A rule found its pattern but cannot write the rewrite out faithfully (a search text that
    is not unique, a result that does not parse): the rule declines, nothing is proposed."""


class NoRuleApplies(ProviderError):
    """No heuristic rule that has not been tried yet writes a rewrite for the function asked
    about. `function` names it; `rules` lists the rules whose pattern the function alone shows
    (what the coordinator saw) so a campaign can record them as tried and move on."""

    def __init__(self, message: str, *, function: str = "", rules: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.function = function
        self.rules = rules


# The function a rule examines is the hot function as the source readers read it: its name,
# file, language, text, span, and the whole file's text when the role is given it.
Subject = SourceFunction


@dataclass(frozen=True)
class Finding:
    """A rule's pattern is present in the function: the structural evidence, in words."""

    rule: str
    cause: Cause
    evidence: str
    certain: bool = True


@dataclass(frozen=True)
class Proposal:
    """A rewrite: the finding it answers, the optimizer answer, and the whole new text of every
    file it changes (target-relative path -> text), which the provider checks still parses."""

    finding: Finding
    answer: OptimizerAnswer
    files: Mapping[str, str] = field(default_factory=dict)


def unused_name(base: str, used: set[str], *, joiner: str) -> str:
    """`base`, or `base` + joiner + 2, 3, ...: the first name not in `used` (Go's style joins
    with "", Python's with "_")."""
    candidate, number = base, 1
    while candidate in used:
        number += 1
        candidate = f"{base}{joiner}{number}"
    return candidate


def split_judged(judged: Iterable[T | str]) -> tuple[list[T], list[str]]:
    """A rule's verdicts on the places it looked at, in order, split: the places it can rewrite,
    and why not (a str) for each of the others; the reasons are what `explain` reports."""
    usable: list[T] = []
    reasons: list[str] = []
    for verdict in judged:
        if isinstance(verdict, str):
            reasons.append(verdict)
        else:
            usable.append(verdict)
    return usable, reasons
