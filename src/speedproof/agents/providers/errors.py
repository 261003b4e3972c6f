"""Named provider failures, so a caller can tell a typo from an outage from a silent server.

Every class is a `ProviderError`. `is_retryable` says whether the retry policy may send the
request again: only rate limits (HTTP 429), server errors (HTTP 5xx, or their in-stream forms
such as Anthropic's `overloaded_error` event) and a connection the server dropped mid-request
are worth another try; a refusal such as 400/401/404 would fail the
same way again, and a silent server would most likely stay silent.
"""

from __future__ import annotations

from speedproof.agents.providers.base import ProviderError


class ProviderConfigError(ProviderError):
    """The provider is misconfigured: a malformed spec, a missing key, a bad base URL."""


class EndpointStatusError(ProviderError):
    """The endpoint answered with an HTTP error status; the message carries the server's own
    words (with any API key removed)."""

    def __init__(self, message: str, *, status: int, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def retryable(self) -> bool:
        return self.status == 429 or 500 <= self.status <= 599


class EndpointUnreachable(ProviderError):
    """No connection could be made (refused, unknown host, TLS failure, connect timeout)."""


class ConnectionDropped(ProviderError):
    """The server reset or closed the connection before the answer was complete."""


class SilenceTimeout(ProviderError):
    """No byte arrived for the silence timeout, while waiting for the answer to start or
    between two chunks of it."""


class IncompleteAnswer(ProviderError):
    """The stream ended without the event that closes an answer, so the text may be cut."""


# Error types a server may send inside a started stream that mean "overloaded" or "internal
# error", the in-stream forms of HTTP 529/500 (Anthropic: overloaded_error, api_error; OpenAI and
# vLLM: server_error), and of 429.
RETRYABLE_STREAM_ERRORS = frozenset(
    {"overloaded_error", "api_error", "server_error", "internal_server_error", "rate_limit_error"}
)


class StreamErrorEvent(ProviderError):
    """The server reported an error inside an answer it had started with HTTP 200."""

    def __init__(self, message: str, *, error_type: str | None) -> None:
        super().__init__(message)
        self.error_type = error_type

    @property
    def retryable(self) -> bool:
        return self.error_type in RETRYABLE_STREAM_ERRORS


class RetriesExhausted(ProviderError):
    """Every allowed attempt failed with a retryable error; the last one is the cause."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class LogprobsUnavailable(ProviderError):
    """Token probabilities were asked for and this endpoint cannot return them."""


class PreflightError(ProviderError):
    """The endpoint or the model failed the check made before a campaign spends any work."""


def is_retryable(error: ProviderError) -> bool:
    """True for the failures the retry policy may repeat (see the module docstring)."""
    if isinstance(error, EndpointStatusError | StreamErrorEvent):
        return error.retryable
    return isinstance(error, ConnectionDropped)
