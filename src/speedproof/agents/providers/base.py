"""The provider protocol: a list of chat messages in, one completion out.

Kept deliberately tiny (the real model providers come later): anything with a `complete` method
of this shape is a provider, so tests can use the replay provider and production a hosted model
without either knowing about the other.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from speedproof.errors import SpeedproofError

Role = Literal["system", "user", "assistant"]


class ProviderError(SpeedproofError):
    """A provider could not produce an answer; never replaced by an empty answer."""


class ChatMessage(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Role
    content: str


class Completion(BaseModel):
    """One answer and what it cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    model: str = Field(min_length=1)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class Provider(Protocol):
    """Something that answers a conversation. `role` names the job (teacher, student, judge),
    so one recorded file or one configured client can serve several jobs."""

    def complete(self, messages: list[ChatMessage], *, role: str) -> Completion: ...
