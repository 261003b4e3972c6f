"""A provider for Anthropic's Messages API, through the `anthropic` SDK.

The answer is streamed (message_start, content_block_* and message_delta events, closed by
message_stop); see `endpoint` for the silence timeout, `retry` for the retry policy and
`credentials` for the key (the SDK sends it in the `Authorization` header). The SDK's own
retries are off, and so is its OpenTelemetry tracing, which could otherwise export prompts and
answers.

System messages go in the request's `system` field, joined by a blank line; user and assistant
turns keep their order. The input token count is the sum Anthropic bills (`input_tokens` plus
cache writes and reads); any cache tokens leave `cost_usd` at None because the price table holds
no cache rates (speedproof never asks for caching).

The Messages API returns no token probabilities: `complete(..., logprobs=True)` fails with
`LogprobsUnavailable` at once; use an OpenAI-compatible endpoint for a classifier.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anthropic
from anthropic.types import (
    AssistantMessageParam,
    MessageParam,
    RawMessageStreamEvent,
    UserMessageParam,
)

from speedproof.agents.providers.base import ChatMessage, Completion
from speedproof.agents.providers.credentials import check_base_url, resolve_api_key
from speedproof.agents.providers.endpoint import Caller, Endpoint, EndpointProvider, sdk_timeout
from speedproof.agents.providers.errors import (
    IncompleteAnswer,
    LogprobsUnavailable,
    ProviderConfigError,
)
from speedproof.agents.providers.pricing import PriceTable, shipped_prices
from speedproof.agents.providers.retry import RetryPolicy
from speedproof.agents.providers.sdk_failures import SdkErrors

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
# The API requires a ceiling on output; 8192 tokens holds any role's JSON answer (a whole
# rewritten function included) with room to spare, and every current model accepts it.
DEFAULT_MAX_OUTPUT_TOKENS = 8192
# Anthropic's list endpoint returns at most 1000 models a page; one page is every model.
LIST_LIMIT = 1000

_SDK_ERRORS = SdkErrors(
    base=anthropic.APIError,
    status=anthropic.APIStatusError,
    connection=anthropic.APIConnectionError,
)


def split_system(messages: list[ChatMessage]) -> tuple[str, list[MessageParam]]:
    """(system text, the other turns in order) as the Messages API wants them."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[MessageParam] = []
    for m in messages:
        if m.role == "user":
            turns.append(UserMessageParam(role="user", content=m.content))
        elif m.role == "assistant":
            turns.append(AssistantMessageParam(role="assistant", content=m.content))
    return system, turns


@dataclass
class _Streamed:
    requested: str
    parts: list[str] = field(default_factory=list)
    model: str = ""
    input_tokens: int = 0
    cache_tokens: int = 0
    output_tokens: int = 0
    usage_seen: bool = False
    stopped: bool = False

    def add(self, event: RawMessageStreamEvent) -> None:
        if event.type == "message_start":
            usage = event.message.usage
            self.model = event.message.model or self.model
            self.usage_seen = True
            self.input_tokens = usage.input_tokens
            self.cache_tokens = (usage.cache_creation_input_tokens or 0) + (
                usage.cache_read_input_tokens or 0
            )
            self.output_tokens = usage.output_tokens
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            self.parts.append(event.delta.text)
        elif event.type == "message_delta":
            # message_delta counts are cumulative, so the last one is the total.
            self.output_tokens = event.usage.output_tokens
            if event.usage.input_tokens is not None:
                self.input_tokens = event.usage.input_tokens
        elif event.type == "message_stop":
            self.stopped = True

    @property
    def reported_model(self) -> str:
        return self.model or self.requested


class AnthropicProvider(EndpointProvider):
    """One Claude model through the Messages API. `name` is `anthropic:<model>`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        silence_timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        prices: PriceTable | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        url = check_base_url(base_url or DEFAULT_BASE_URL)
        key = resolve_api_key(base_url=url, default_env=DEFAULT_KEY_ENV, api_key_env=api_key_env)
        if max_output_tokens < 1:
            raise ProviderConfigError(f"max_output_tokens must be >= 1, not {max_output_tokens}")
        self.endpoint = Endpoint(
            kind="anthropic",
            model=model,
            base_url=url,
            key=key,
            silence_timeout_s=silence_timeout_s,
            retry=retry or RetryPolicy(),
            prices=prices or shipped_prices(),
        )
        self.max_output_tokens = max_output_tokens
        self._caller = Caller(self.endpoint, _SDK_ERRORS, sleep=sleep, rng=rng)
        self._client = anthropic.Anthropic(
            api_key=key.value,
            base_url=url,
            max_retries=0,
            timeout=sdk_timeout(silence_timeout_s),
            open_telemetry=False,
        )

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        role: str,
        logprobs: bool = False,
        top_logprobs: int = 0,
    ) -> Completion:
        """Stream one answer. `logprobs=True` is refused: the Messages API has none."""
        if logprobs or top_logprobs:
            raise LogprobsUnavailable(
                f"{self.endpoint.where}: Anthropic's Messages API cannot return token "
                "probabilities; use an OpenAI-compatible endpoint for this"
            )
        started = time.monotonic()
        done = self._caller.run(f"answer for role {role!r}", lambda: self._stream(messages))
        streamed = done.value
        model = streamed.reported_model
        billed_input = streamed.input_tokens + streamed.cache_tokens
        cost = None
        if streamed.usage_seen and not streamed.cache_tokens:
            cost = self.endpoint.cost_usd(model, billed_input, streamed.output_tokens)
        return Completion(
            text="".join(streamed.parts),
            model=model,
            input_tokens=billed_input,
            output_tokens=streamed.output_tokens,
            provider=self.name,
            cost_usd=cost,
            duration_s=time.monotonic() - started,
            attempts=done.attempts,
        )

    def _stream(self, messages: list[ChatMessage]) -> _Streamed:
        system, turns = split_system(messages)
        if not turns:
            raise ProviderConfigError("the Messages API needs at least one user turn")
        stream = self._client.messages.create(
            model=self.endpoint.model,
            max_tokens=self.max_output_tokens,
            system=system if system else anthropic.omit,
            messages=turns,
            stream=True,
        )
        streamed = _Streamed(requested=self.endpoint.model)
        with stream:
            for event in stream:
                streamed.add(event)
        if not streamed.stopped:
            raise IncompleteAnswer(
                f"{self.endpoint.where}: the stream ended before message_stop; "
                "the answer may be cut off"
            )
        return streamed

    def _retrieve_model(self) -> str:
        return str(self._client.models.retrieve(self.endpoint.model).id)

    def _list_models(self) -> list[str]:
        return [m.id for m in self._client.models.list(limit=LIST_LIMIT).data]
