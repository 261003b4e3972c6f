"""A provider for any OpenAI-compatible chat-completions endpoint, through the `openai` SDK:
OpenAI itself, or vLLM, Ollama, llama.cpp's server, OpenRouter... named by a base URL.

Every answer is streamed (`stream=True` with `stream_options.include_usage`, so the last chunk
carries the token counts); see `endpoint` for the silence timeout, `retry` for the retry policy
and `credentials` for where the key comes from. The SDK's own retries are off.

Token probabilities: `complete(..., logprobs=True, top_logprobs=N)` returns the first
`LOGPROB_TOKENS` answer tokens with their `N` most likely alternatives in `Completion.logprobs`
(a yes/no classifier reads the first one). An endpoint that streams no probabilities fails with
`LogprobsUnavailable` rather than an answer without them.

A server that reports no model id gets the requested name in `Completion.model`; one that sends
no usage chunk leaves the token counts at 0 and `cost_usd` at None.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_token_logprob import ChatCompletionTokenLogprob

from speedproof.agents.providers.base import ChatMessage, Completion, TokenLogprobs
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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# OpenAI accepts 0..20 alternatives per position; other servers cap lower and say so in a 400.
MAX_TOP_LOGPROBS = 20
# A classifier reads the first token or two; 32 keeps a runaway answer from filling memory.
LOGPROB_TOKENS = 32

_SDK_ERRORS = SdkErrors(
    base=openai.APIError, status=openai.APIStatusError, connection=openai.APIConnectionError
)


def _message(message: ChatMessage) -> ChatCompletionMessageParam:
    if message.role == "system":
        return ChatCompletionSystemMessageParam(role="system", content=message.content)
    if message.role == "assistant":
        return ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
    return ChatCompletionUserMessageParam(role="user", content=message.content)


def _token(entry: ChatCompletionTokenLogprob) -> TokenLogprobs:
    return TokenLogprobs(
        token=entry.token,
        logprob=entry.logprob,
        top={alt.token: alt.logprob for alt in entry.top_logprobs},
    )


@dataclass
class _Streamed:
    """What the chunks of one answer added up to."""

    requested: str
    parts: list[str] = field(default_factory=list)
    model: str = ""
    usage_seen: bool = False
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None
    logprobs: list[TokenLogprobs] = field(default_factory=list)

    def add(self, chunk: ChatCompletionChunk) -> None:
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage_seen = True
            self.input_tokens = chunk.usage.prompt_tokens
            self.output_tokens = chunk.usage.completion_tokens
            details = chunk.usage.prompt_tokens_details
            self.cached_input_tokens = (details.cached_tokens or 0) if details else 0
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            if choice.delta.content:
                self.parts.append(choice.delta.content)
            if choice.logprobs is not None and choice.logprobs.content:
                room = LOGPROB_TOKENS - len(self.logprobs)
                self.logprobs.extend(_token(e) for e in choice.logprobs.content[: max(room, 0)])
            self.finish_reason = choice.finish_reason or self.finish_reason

    @property
    def reported_model(self) -> str:
        return self.model or self.requested


class OpenAICompatProvider(EndpointProvider):
    """One model on one OpenAI-compatible endpoint. `name` is `openai:<model>`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        silence_timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        url = check_base_url(base_url or DEFAULT_BASE_URL)
        key = resolve_api_key(base_url=url, default_env=DEFAULT_KEY_ENV, api_key_env=api_key_env)
        self.endpoint = Endpoint(
            kind="openai",
            model=model,
            base_url=url,
            key=key,
            silence_timeout_s=silence_timeout_s,
            retry=retry or RetryPolicy(),
            prices=prices or shipped_prices(),
        )
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self._caller = Caller(self.endpoint, _SDK_ERRORS, sleep=sleep, rng=rng)
        self._client = openai.OpenAI(
            api_key=key.value,
            base_url=url,
            max_retries=0,
            timeout=sdk_timeout(silence_timeout_s),
        )

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        role: str,
        logprobs: bool = False,
        top_logprobs: int = 0,
    ) -> Completion:
        """Stream one answer. With `logprobs`, also the first answer tokens' probabilities
        and `top_logprobs` (0..20) alternatives for each."""
        if not 0 <= top_logprobs <= MAX_TOP_LOGPROBS:
            raise ProviderConfigError(
                f"top_logprobs must be 0..{MAX_TOP_LOGPROBS}, not {top_logprobs}"
            )
        started = time.monotonic()
        done = self._caller.run(
            f"answer for role {role!r}", lambda: self._stream(messages, logprobs, top_logprobs)
        )
        streamed = done.value
        if logprobs and not streamed.logprobs:
            raise LogprobsUnavailable(
                f"{self.endpoint.where}: this endpoint cannot return token probabilities "
                "(logprobs were requested and none came back)"
            )
        model = streamed.reported_model
        cost = None
        if streamed.usage_seen:
            cost = self.endpoint.cost_usd(
                model, streamed.input_tokens, streamed.output_tokens, streamed.cached_input_tokens
            )
        return Completion(
            text="".join(streamed.parts),
            model=model,
            input_tokens=streamed.input_tokens,
            output_tokens=streamed.output_tokens,
            provider=self.name,
            cost_usd=cost,
            duration_s=time.monotonic() - started,
            attempts=done.attempts,
            logprobs=streamed.logprobs if logprobs else None,
        )

    def _stream(self, messages: list[ChatMessage], logprobs: bool, top: int) -> _Streamed:
        stream = self._client.chat.completions.create(
            model=self.endpoint.model,
            messages=[_message(m) for m in messages],
            stream=True,
            stream_options={"include_usage": True},
            max_completion_tokens=self.max_output_tokens
            if self.max_output_tokens is not None
            else openai.omit,
            temperature=self.temperature if self.temperature is not None else openai.omit,
            logprobs=True if logprobs else openai.omit,
            top_logprobs=top if logprobs else openai.omit,
        )
        streamed = _Streamed(requested=self.endpoint.model)
        with stream:
            for chunk in stream:
                streamed.add(chunk)
        if streamed.finish_reason is None:
            raise IncompleteAnswer(
                f"{self.endpoint.where}: the stream ended without a finish reason; "
                "the answer may be cut off"
            )
        return streamed

    def _retrieve_model(self) -> str:
        return str(self._client.models.retrieve(self.endpoint.model).id)

    def _list_models(self) -> list[str]:
        return [m.id for m in self._client.models.list().data]
