"""The provider protocol: a list of chat messages in, one completion out.

Kept deliberately tiny: anything with a `complete` method of this shape is a provider, so tests
can use the replay provider and production a hosted model without either knowing about the
other. Hosted providers fill in what a call cost (`provider`, tokens, `cost_usd`, `duration_s`,
`attempts`); offline providers leave the defaults.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from speedproof.ground.errors import SpeedproofError

Role = Literal["system", "user", "assistant"]


class ProviderError(SpeedproofError):
    """A provider could not produce an answer; never replaced by an empty answer."""


class ChatMessage(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Role
    content: str


class TokenLogprobs(BaseModel):
    """One answer token, its log-probability and the most likely alternatives at its position
    (token -> logprob, the chosen token included when the server lists it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class Completion(BaseModel):
    """One answer and what it cost.

    `model` is the model id the server reported (a hosted endpoint may answer with a dated
    snapshot of the requested name); `provider` names who answered (e.g. `openai:gpt-4o-mini`).
    `cost_usd` is `None` whenever the price is unknown: it is never estimated. `duration_s` is
    the wall time of the whole call, retries and back-off included; `attempts` counts requests
    sent (1 when the first one answered).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    model: str = Field(min_length=1)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    provider: str = ""
    cost_usd: float | None = Field(default=None, ge=0)
    duration_s: float = Field(default=0.0, ge=0)
    attempts: int = Field(default=1, ge=1)
    logprobs: list[TokenLogprobs] | None = None


class Provider(Protocol):
    """Something that answers a conversation. `role` names the job (teacher, student, judge),
    so one recorded file or one configured client can serve several jobs."""

    def complete(self, messages: list[ChatMessage], *, role: str) -> Completion: ...
