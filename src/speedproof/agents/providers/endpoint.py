"""What the OpenAI-compatible and Anthropic providers share: the endpoint's settings, the
timeouts handed to the SDK, and one way to run a call (translate failures, retry, count).

Timeouts: `silence_timeout_s` is the SDK's read (and write and pool) timeout, i.e. the longest
gap without a byte from the server, the wait for the first byte of the answer included. Because
the answer is streamed, a model that is still writing keeps the call alive however long the
answer is, and one that stops mid-answer fails after that gap with `SilenceTimeout`. Keep-alive
bytes a server sends (SSE comments, Anthropic `ping` events) count as activity. Connecting has
its own, shorter limit, `CONNECT_TIMEOUT_S`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx2

from speedproof.agents.providers.base import ProviderError
from speedproof.agents.providers.credentials import ApiKey
from speedproof.agents.providers.errors import ProviderConfigError
from speedproof.agents.providers.preflight import PreflightReport, check_model
from speedproof.agents.providers.pricing import PriceTable
from speedproof.agents.providers.retry import Attempted, RetryPolicy, call_with_retries
from speedproof.agents.providers.sdk_failures import SdkErrors, translate

T = TypeVar("T")

# A reachable host completes a TCP (and TLS) handshake in well under a second; 10 s covers a
# slow network and still fails a black-holed address quickly.
CONNECT_TIMEOUT_S = 10.0


def sdk_timeout(silence_timeout_s: float) -> httpx2.Timeout:
    return httpx2.Timeout(silence_timeout_s, connect=min(CONNECT_TIMEOUT_S, silence_timeout_s))


@dataclass(frozen=True)
class Endpoint:
    """One model on one endpoint and how to call it. Holds the key; its repr does not."""

    kind: str
    model: str
    base_url: str
    key: ApiKey = field(repr=False)
    silence_timeout_s: float
    retry: RetryPolicy
    prices: PriceTable = field(repr=False)

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ProviderConfigError(f"{self.kind}: the model name is empty")
        if not self.silence_timeout_s > 0:
            raise ProviderConfigError(
                f"silence timeout must be > 0 seconds, not {self.silence_timeout_s}"
            )

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.model}"

    @property
    def where(self) -> str:
        return f"{self.name} at {self.base_url}"

    def cost_usd(
        self, model: str, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0
    ) -> float | None:
        return self.prices.cost_usd(
            self.base_url,
            model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_input_tokens=cached_input_tokens,
        )


class EndpointProvider:
    """What every provider behind an `Endpoint` does the same way: its name, its model, a repr
    that names where the key came from and never the key, and the preflight. Each SDK supplies
    only how to look its model up (`_retrieve_model`) and how to list models (`_list_models`)."""

    endpoint: Endpoint
    _caller: Caller

    def _retrieve_model(self) -> str:
        raise NotImplementedError

    def _list_models(self) -> list[str]:
        raise NotImplementedError

    def preflight(self) -> PreflightReport:
        """Check the endpoint answers and serves this model (see `preflight`)."""
        started = time.monotonic()
        e = self.endpoint
        served, listed = check_model(
            e.where,
            e.model,
            retrieve=lambda: self._caller.run("model lookup", self._retrieve_model).value,
            listing=lambda: self._caller.run("model listing", self._list_models).value,
        )
        return PreflightReport(
            provider=self.name,
            endpoint=e.base_url,
            model=e.model,
            served_model=served,
            listed_models=listed,
            checked=True,
            duration_s=time.monotonic() - started,
            detail=f"{e.where} serves {served}",
        )

    @property
    def name(self) -> str:
        return self.endpoint.name

    @property
    def model(self) -> str:
        return self.endpoint.model

    def __repr__(self) -> str:
        e = self.endpoint
        kind = type(self).__name__
        return f"{kind}({e.model!r}, base_url={e.base_url!r}, key={e.key.source!r})"


class Caller:
    """Runs SDK calls for one endpoint under the retry policy, with named failures."""

    def __init__(
        self,
        endpoint: Endpoint,
        sdk: SdkErrors,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._sdk = sdk
        self._sleep = sleep
        self._rng = rng or random.Random()

    def run(self, what: str, call: Callable[[], T]) -> Attempted[T]:
        """`call` (an SDK call, a streamed answer read to its end included) with retries."""
        endpoint = self.endpoint

        def once() -> T:
            named: ProviderError | None = None
            try:
                return call()
            except Exception as err:
                named = translate(
                    err,
                    self._sdk,
                    where=endpoint.where,
                    key=endpoint.key,
                    silence_s=endpoint.silence_timeout_s,
                )
                if named is None:
                    raise
            # Raised outside the handler on purpose: the SDK's exception holds the request, its
            # headers (the key) included, and must not stay reachable as __context__.
            raise named

        return call_with_retries(
            once, endpoint.retry, sleep=self._sleep, rng=self._rng, what=f"{endpoint.where}: {what}"
        )
