"""Replay recorded answers from a JSON-lines file, for tests and for re-running an evaluation.

Each line is `{"role": ..., "text": ..., "model": ..., "digest": ...}` (`input_tokens` and
`output_tokens` optional). An answer is found in this order:

1. keyed: a line whose `role` matches and whose `digest` equals `messages_digest(messages)`,
   the SHA-256 of the conversation. A keyed line may answer any number of times, so replaying
   the same conversation twice gives the same answer.
2. in order: otherwise, the next unused line of that role with no `digest` (`null` or absent).
   Each such line answers once.

When neither exists the provider raises `ReplayMissing`, naming the role and the digest: a
missing recording is an error, never a silent empty answer.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from speedproof.agents.providers.base import ChatMessage, Completion, ProviderError


class ReplayMissing(ProviderError):
    """The recording has no answer for this conversation."""


class _Recorded(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: str
    text: str
    model: str = Field(default="replay", min_length=1)
    digest: str | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


def messages_digest(messages: list[ChatMessage]) -> str:
    """SHA-256 of the conversation as canonical JSON (role and content of every message)."""
    payload = [{"role": m.role, "content": m.content} for m in messages]
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded_line(
    role: str, text: str, *, messages: list[ChatMessage] | None = None, model: str = "replay"
) -> str:
    """One line of a recording: keyed to `messages` when given, else an in-order answer."""
    digest = None if messages is None else messages_digest(messages)
    record = _Recorded(role=role, text=text, model=model, digest=digest)
    return record.model_dump_json(exclude_none=True)


class ReplayProvider:
    """Plays back a recording; see the module docstring for how answers are matched."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._keyed: dict[tuple[str, str], _Recorded] = {}
        self._ordered: dict[str, deque[_Recorded]] = {}
        for number, line in enumerate(self._lines(), start=1):
            record = self._parse(line, number)
            if record.digest is None:
                self._ordered.setdefault(record.role, deque()).append(record)
            else:
                self._keyed[(record.role, record.digest)] = record

    @property
    def name(self) -> str:
        return f"replay:{self.path.name}"

    def _lines(self) -> list[str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as err:
            raise ProviderError(f"cannot read replay file {self.path}: {err}") from err
        return [line for line in text.splitlines() if line.strip()]

    def _parse(self, line: str, number: int) -> _Recorded:
        try:
            return _Recorded.model_validate_json(line)
        except ValidationError as err:
            raise ProviderError(f"{self.path}:{number}: not a recorded answer: {err}") from err

    def complete(self, messages: list[ChatMessage], *, role: str) -> Completion:
        digest = messages_digest(messages)
        record = self._keyed.get((role, digest))
        if record is None:
            queue = self._ordered.get(role)
            if not queue:
                raise ReplayMissing(
                    f"{self.path} has no answer for role {role!r} and conversation "
                    f"{digest[:16]}… (no keyed line matches and no in-order line is left)"
                )
            record = queue.popleft()
        return Completion(
            text=record.text,
            model=record.model,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
        )
