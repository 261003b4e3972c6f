"""The advisor over an OpenAI-compatible endpoint: one yes/no question a request, the answer
read from the first token's log-probabilities, and every answer checked against the pinned
build.

Pinned build: the advisor is configured with an exact model id (`openai:<id>`), asks for that
id, and refuses any answer whose reported model is not exactly `<id>` or that came through
another provider (`PinnedBuildMismatch`, no override): a dated snapshot answering for an alias
is a different build, and a baseline measured on one says nothing about the other.

Requests are sent with temperature 0, one output token and the 20 most likely alternatives.
An endpoint that returns no token probabilities is refused (`LogprobsRefused`), and so is
Anthropic's Messages API, which has none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from speedproof.advisor.answers import Answer
from speedproof.advisor.errors import AdvisorConfigError, LogprobsRefused, PinnedBuildMismatch
from speedproof.advisor.logprobs import yes_probability
from speedproof.advisor.questions import Question, messages_for
from speedproof.advisor.subject import Subject
from speedproof.agents.providers.base import ChatMessage, Completion
from speedproof.agents.providers.errors import LogprobsUnavailable
from speedproof.agents.providers.registry import require_sdk
from speedproof.agents.providers.retry import RetryPolicy

if TYPE_CHECKING:
    from speedproof.agents.providers.openai_compat import OpenAICompatProvider

ROLE = "advisor"
Observer = Callable[[Completion, list[ChatMessage]], None]


def split_model_id(model_id: str) -> str:
    """The model name inside `openai:<name>`; any other form is an AdvisorConfigError."""
    kind, sep, name = model_id.partition(":")
    if kind == "anthropic":
        raise AdvisorConfigError(
            f"advisor model {model_id!r}: Anthropic's Messages API returns no token "
            "probabilities; the advisor needs an OpenAI-compatible endpoint (openai:MODEL)"
        )
    if kind != "openai" or not sep or not name.strip():
        raise AdvisorConfigError(
            f"advisor model {model_id!r} is not of the form openai:MODEL (an exact model id "
            "served by an OpenAI-compatible endpoint that returns logprobs)"
        )
    return name.strip()


class EndpointAdvisor:
    """Asks one pinned model. `observe` sees every completion (for cost accounting)."""

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        silence_timeout_s: float = 60.0,
        max_retries: int = 4,
        observe: Observer | None = None,
    ) -> None:
        self.name = split_model_id(model_id)
        # The SDK comes with the `llm` extra. Imported here, not at the top: the campaign loop
        # imports this package for the offline static advisor too, which needs none of it.
        require_sdk("openai", f"the advisor's model {self.model_id}")
        from speedproof.agents.providers.openai_compat import (
            MAX_TOP_LOGPROBS,
            OpenAICompatProvider,
        )

        self.top_logprobs = MAX_TOP_LOGPROBS
        self.provider: OpenAICompatProvider = OpenAICompatProvider(
            self.name,
            base_url=base_url,
            api_key_env=api_key_env,
            silence_timeout_s=silence_timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            max_output_tokens=1,
            temperature=0.0,
        )
        self.observe = observe

    @property
    def model_id(self) -> str:
        return f"openai:{self.name}"

    def answer(self, asked: Question, subject: Subject) -> Answer:
        messages = messages_for(asked, subject)
        try:
            completion = self.provider.complete(
                messages, role=ROLE, logprobs=True, top_logprobs=self.top_logprobs
            )
        except LogprobsUnavailable as err:
            raise LogprobsRefused(
                f"advisor {self.model_id}: {err}. The advisor reads each probability from the "
                "model's own token log-probabilities and cannot use an endpoint without them."
            ) from err
        if self.observe is not None:
            self.observe(completion, messages)
        self.check_pinned(completion)
        return Answer(asked.id, yes_probability(completion.logprobs or []))

    def check_pinned(self, completion: Completion) -> None:
        if completion.model != self.name:
            raise PinnedBuildMismatch(
                f"advisor asked for model {self.name!r} and the answer reports "
                f"{completion.model!r}; answers from any other build are refused"
            )
        if completion.provider != self.model_id:
            raise PinnedBuildMismatch(
                f"advisor asked provider {self.model_id!r} and the answer came through "
                f"{completion.provider!r}; answers from any other provider are refused"
            )
