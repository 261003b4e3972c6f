"""The check a campaign runs before it spends any work: does the endpoint answer, and does it
serve the model asked for?

A hosted provider's `preflight()` asks the endpoint for the model itself (`GET models/{id}`)
and, when that says 404, for the list of models: some servers (vLLM, llama.cpp) only implement
the list. A name missing from the list fails at once with the closest names the server listed,
so `gpt-4o-mnii` says "did you mean gpt-4o-mini". A dead endpoint, a refused key or a silent
server fail at once too. Offline providers (replay, heuristic) have nothing to check and get a
report with `checked=False`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from speedproof.agents.providers.base import ProviderError
from speedproof.agents.providers.errors import EndpointStatusError, PreflightError

# How many near names a typo report lists, and how alike they must be (difflib's ratio): 0.6
# catches a dropped, doubled or swapped letter in a 10-character id without listing everything.
CLOSE_MATCHES = 5
CLOSE_CUTOFF = 0.6
# Statuses meaning "this route does not exist here", after which the list is the only source.
_NO_ROUTE = (404, 405)


class PreflightReport(BaseModel):
    """What the check found. `served_model` is the id the endpoint confirmed (it may resolve an
    alias to a dated id); `listed_models` counts the models the endpoint listed, when it had to
    be asked for the list."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str
    endpoint: str | None
    model: str | None
    served_model: str | None
    listed_models: int | None
    checked: bool
    duration_s: float
    detail: str


@runtime_checkable
class SupportsPreflight(Protocol):
    def preflight(self) -> PreflightReport: ...


def preflight(provider: object) -> PreflightReport:
    """Check `provider` before use: its own `preflight()` when it has one (hosted endpoints),
    else an unchecked report for an offline provider. Raises `PreflightError`."""
    if isinstance(provider, SupportsPreflight):
        return provider.preflight()
    name = getattr(provider, "name", None)
    return PreflightReport(
        provider=name if isinstance(name, str) else type(provider).__name__,
        endpoint=None,
        model=None,
        served_model=None,
        listed_models=None,
        checked=False,
        duration_s=0.0,
        detail="offline provider: there is no endpoint to check",
    )


def close_matches(name: str, ids: Iterable[str]) -> list[str]:
    """The listed ids nearest to `name`, best first (at most `CLOSE_MATCHES`)."""
    return difflib.get_close_matches(name, list(ids), n=CLOSE_MATCHES, cutoff=CLOSE_CUTOFF)


def missing_model_message(where: str, model: str, ids: list[str]) -> str:
    near = close_matches(model, ids)
    if near:
        return f"{where}: no model {model!r}; did you mean {', '.join(near)}?"
    shown = ", ".join(sorted(ids)[:10]) + (" …" if len(ids) > 10 else "")
    return f"{where}: no model {model!r} among the {len(ids)} it lists ({shown or 'none'})"


def _from_listing(where: str, model: str, listing: Callable[[], list[str]]) -> tuple[str, int]:
    try:
        ids = listing()
    except EndpointStatusError as err:
        if err.status in _NO_ROUTE:
            raise PreflightError(
                f"{where}: no model {model!r} (HTTP {err.status}) and the endpoint lists none"
            ) from err
        raise PreflightError(f"{where}: listing the models failed: {err}") from err
    except ProviderError as err:
        raise PreflightError(f"{where}: listing the models failed: {err}") from err
    if model not in ids:
        raise PreflightError(missing_model_message(where, model, ids))
    return model, len(ids)


def check_model(
    where: str,
    model: str,
    *,
    retrieve: Callable[[], str],
    listing: Callable[[], list[str]],
) -> tuple[str, int | None]:
    """(served id, count listed or None): `retrieve` first, the listing when it answers 404.
    Both callables raise `ProviderError`s; every failure leaves as a `PreflightError`."""
    try:
        return retrieve(), None
    except EndpointStatusError as err:
        if err.status not in _NO_ROUTE:
            raise PreflightError(f"{where}: endpoint check failed: {err}") from err
    except ProviderError as err:
        raise PreflightError(f"{where}: endpoint check failed: {err}") from err
    return _from_listing(where, model, listing)
