"""What a model call cost, from a price table; `None` whenever the price is not known.

The table is keyed by endpoint host and then by the exact model id the server reported, because
a price belongs to one vendor's endpoint: a local server that names itself `gpt-4o-mini` (some
do) or a router reselling a model must not inherit the vendor's price. There is no prefix or
family matching either: OpenAI's `gpt-4o-2024-05-13` cost twice what `gpt-4o` costs now, so
guessing from a name would be wrong in exactly the cases that matter. The shipped table is
`prices.json` next to this module; a campaign can load its own with `PriceTable.from_file`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from speedproof.agents.providers.credentials import endpoint_host
from speedproof.agents.providers.errors import ProviderConfigError

TOKENS_PER_PRICE_UNIT = 1_000_000


class Price(BaseModel):
    """List price of one model in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_usd_per_mtok: float = Field(ge=0)
    output_usd_per_mtok: float = Field(ge=0)
    # The rate for input tokens served from the vendor's prompt cache; without it a call that
    # reports cached tokens has no price (charging them at the full rate would overstate it).
    cached_input_usd_per_mtok: float | None = Field(default=None, ge=0)
    # Above this many input tokens the vendor charges a long-context rate the table does not
    # hold (Sonnet 4.5 beyond 200,000), so such a call has no price.
    max_input_tokens: int | None = Field(default=None, gt=0)


class _TableFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    about: str = ""
    hosts: dict[str, dict[str, Price]]


class PriceTable:
    """Prices by endpoint host and exact model id."""

    def __init__(self, hosts: Mapping[str, Mapping[str, Price]]) -> None:
        self._hosts = {host.lower(): dict(models) for host, models in hosts.items()}

    @classmethod
    def from_json(cls, text: str, *, origin: str) -> PriceTable:
        try:
            parsed = _TableFile.model_validate(json.loads(text))
        except (ValueError, ValidationError) as err:
            raise ProviderConfigError(f"{origin} is not a price table: {err}") from err
        return cls(parsed.hosts)

    @classmethod
    def from_file(cls, path: Path) -> PriceTable:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ProviderConfigError(f"cannot read price table {path}: {err}") from err
        return cls.from_json(text, origin=str(path))

    def price(self, base_url: str, model: str) -> Price | None:
        """The price of `model` on the endpoint `base_url`, or None when not listed."""
        return self._hosts.get(endpoint_host(base_url), {}).get(model)

    def cost_usd(
        self,
        base_url: str,
        model: str,
        *,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
    ) -> float | None:
        """Dollars for one call, or None when a rate it needs is unknown. `input_tokens`
        counts every prompt token, the `cached_input_tokens` among them included."""
        price = self.price(base_url, model)
        if price is None:
            return None
        if price.max_input_tokens is not None and input_tokens > price.max_input_tokens:
            return None
        cached = min(cached_input_tokens, input_tokens)
        cached_rate = price.cached_input_usd_per_mtok
        if cached and cached_rate is None:
            return None
        dollars = (
            (input_tokens - cached) * price.input_usd_per_mtok
            + cached * (cached_rate or 0.0)
            + output_tokens * price.output_usd_per_mtok
        )
        return dollars / TOKENS_PER_PRICE_UNIT


@cache
def shipped_prices() -> PriceTable:
    """The table shipped with speedproof (`prices.json`), read once."""
    source = resources.files("speedproof.agents.providers").joinpath("prices.json")
    return PriceTable.from_json(source.read_text(encoding="utf-8"), origin="prices.json")
