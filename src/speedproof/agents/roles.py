"""One model turn per role: the prompt, the call, the answer read and validated, one repair.

A bad answer is never an exception: it is a `RoleResult` with a named `rejection`
("answer-not-json: …", "answer-several-json: …", "answer-invalid: field x: …"), and every
completion made on the way is kept for cost accounting. One repair turn, quoting the exact
validation error, is enough to fix a stray comma or a missing field; a model that fails twice is
unlikely to succeed a third time, so the campaign moves on instead of paying for more turns.
Provider failures (`ProviderError`) are not answers and propagate: the campaign decides.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from speedproof.agents.answers import (
    AnalystAnswer,
    CoordinatorAnswer,
    ExplorerAnswer,
    OptimizerAnswer,
    ReviewerAnswer,
)
from speedproof.agents.prompts import ROLES, RoleName, repair_prompt, system_prompt, user_prompt
from speedproof.agents.providers.base import ChatMessage, Completion, Provider
from speedproof.ground.errors import SpeedproofError

__all__ = [
    "ROLES",
    "SCHEMAS",
    "RoleName",
    "RoleResult",
    "UnusableAnswer",
    "ask",
    "messages_for",
    "read_answer",
]

SCHEMAS: dict[RoleName, type[BaseModel]] = {
    "coordinator": CoordinatorAnswer,
    "explorer": ExplorerAnswer,
    "analyst": AnalystAnswer,
    "optimizer": OptimizerAnswer,
    "reviewer": ReviewerAnswer,
}

# Validation errors quoted in a rejection or a repair turn: enough to fix, short enough to read.
MAX_ERRORS_QUOTED = 5

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class RoleResult:
    """What one role call produced: an answer or a named rejection, and every call made."""

    answer: BaseModel | None
    rejection: str | None
    completions: list[Completion]
    attempts: int

    def __post_init__(self) -> None:
        if (self.answer is None) == (self.rejection is None):
            raise ValueError("a role result has exactly one of an answer and a rejection")


class UnusableAnswer(SpeedproofError):
    """An answer that could not be used; `reason` is the named rejection text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def messages_for(role: RoleName, context: dict[str, Any]) -> list[ChatMessage]:
    """The system and user messages for one turn of `role` (the context must name the role)."""
    return [
        ChatMessage(role="system", content=system_prompt(role)),
        ChatMessage(role="user", content=user_prompt(role, context)),
    ]


def ask(
    role: RoleName, provider: Provider, context: dict[str, Any], *, repair: bool = True
) -> RoleResult:
    """One turn of `role`, plus at most one repair turn when the answer is unusable."""
    messages = messages_for(role, context)
    completions = [provider.complete(messages, role=role)]
    try:
        answer = read_answer(role, completions[0].text)
    except UnusableAnswer as first:
        if not repair:
            return RoleResult(None, first.reason, completions, 1)
        retry = [
            *messages,
            ChatMessage(role="assistant", content=completions[0].text),
            ChatMessage(role="user", content=repair_prompt(first.reason)),
        ]
        completions.append(provider.complete(retry, role=role))
        try:
            answer = read_answer(role, completions[1].text)
        except UnusableAnswer as second:
            return RoleResult(None, second.reason, completions, 2)
    return RoleResult(answer, None, completions, len(completions))


def read_answer(role: RoleName, text: str) -> BaseModel:
    """The validated answer in `text`; raises `UnusableAnswer` with the named reason otherwise."""
    value = _one_json_object(text)
    try:
        return SCHEMAS[role].model_validate(value)
    except ValidationError as err:
        raise UnusableAnswer(f"answer-invalid: {describe_errors(err)}") from err


def describe_errors(err: ValidationError) -> str:
    """`field a.b: message; …` for each error (a whole-answer check names its field itself)."""
    parts = []
    for detail in err.errors()[:MAX_ERRORS_QUOTED]:
        message = str(detail["msg"]).removeprefix("Value error, ")
        where = ".".join(str(part) for part in detail["loc"])
        parts.append(f"field {where}: {message}" if where else message)
    more = len(err.errors()) - MAX_ERRORS_QUOTED
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _one_json_object(text: str) -> dict[str, Any]:
    """Exactly one JSON object: the whole text, else fenced blocks, else objects in the prose."""
    stripped = text.strip()
    if not stripped:
        raise UnusableAnswer("answer-not-json: the answer is empty")
    whole, whole_error = _loads(stripped)
    if isinstance(whole, dict):
        return whole
    if whole_error is None:
        kind = type(whole).__name__
        raise UnusableAnswer(f"answer-not-json: the answer is a JSON {kind}, not an object")
    # A fence marked json, or one holding what looks like an object, is where the answer is;
    # only without one is the prose searched (a code fence may hold braces of its own).
    fenced = [
        _loads(body.strip())
        for language, body in _FENCE.findall(text)
        if language.lower() == "json" or body.lstrip().startswith("{")
    ]
    found = [value for value, _ in fenced if isinstance(value, dict)]
    if not fenced:
        found = _objects_in_prose(text)
    if len(found) == 1:
        return found[0]
    if found:
        raise UnusableAnswer(
            f"answer-several-json: the answer holds {len(found)} JSON objects; give exactly one"
        )
    errors = [error for _, error in fenced if error is not None]
    if errors:
        raise UnusableAnswer(f"answer-not-json: the fenced block is not valid JSON: {errors[0]}")
    if stripped.startswith("{"):
        raise UnusableAnswer(f"answer-not-json: {whole_error}")
    raise UnusableAnswer("answer-not-json: no JSON object found in the answer")


def _loads(text: str) -> tuple[Any, str | None]:
    """The value and None, or None and the decoder's message (line and column included)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as err:
        return None, str(err)


def _objects_in_prose(text: str) -> list[dict[str, Any]]:
    """Top-level JSON objects anywhere in `text`; one nested inside another counts once."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index = text.find("{")
    while index >= 0:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found
