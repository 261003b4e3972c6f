"""Our retry policy for model endpoints: exponential back-off with full jitter, capped.

The SDKs' own retries are switched off (`max_retries=0` on every client) so this is the only
policy and tests can count the requests it sends. Only failures `is_retryable` accepts are
repeated (HTTP 429, HTTP 5xx, a connection reset mid-request); everything else fails at once.

The wait before retry n (n = 1, 2, ...) is uniform in [0, min(max_delay_s, base_delay_s *
2**(n-1))] ("full jitter": many clients hitting one rate limit spread out instead of retrying in
lock step). With the defaults (1 s base, 30 s cap, 4 retries) the worst case waits
1 + 2 + 4 + 8 = 15 s in total. A server's `Retry-After` is honoured as a lower bound, itself
capped at `max_delay_s`, so a server cannot park the campaign for longer than the cap.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from speedproof.agents.providers.base import ProviderError
from speedproof.agents.providers.errors import (
    EndpointStatusError,
    RetriesExhausted,
    is_retryable,
)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to repeat a retryable failure."""

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry delays must be >= 0 seconds")

    def ceiling(self, retry: int) -> float:
        """The largest wait before retry number `retry` (1-based)."""
        return float(min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1)))

    def delay(self, retry: int, *, rng: random.Random, retry_after_s: float | None = None) -> float:
        """The wait before retry number `retry`: jittered, at least the server's Retry-After,
        never more than `max_delay_s`."""
        wait = rng.uniform(0.0, self.ceiling(retry))
        if retry_after_s is not None and retry_after_s > wait:
            wait = min(retry_after_s, self.max_delay_s)
        return wait


@dataclass(frozen=True)
class Attempted(Generic[T]):
    """A result and how many requests it took."""

    value: T
    attempts: int
    waited_s: float


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None],
    rng: random.Random,
    what: str,
) -> Attempted[T]:
    """Run `call` until it succeeds, fails with a non-retryable `ProviderError`, or the policy
    runs out; `what` names the call in the exhausted-retries message."""
    waited = 0.0
    for attempt in range(1, policy.max_retries + 2):
        try:
            return Attempted(call(), attempt, waited)
        except ProviderError as err:
            if not is_retryable(err):
                raise
            if attempt > policy.max_retries:
                raise RetriesExhausted(
                    f"{what} failed {attempt} times (the last: {err})", attempts=attempt
                ) from err
            retry_after = err.retry_after_s if isinstance(err, EndpointStatusError) else None
            wait = policy.delay(attempt, rng=rng, retry_after_s=retry_after)
            sleep(wait)
            waited += wait
    raise AssertionError("unreachable: the loop returns or raises")
