"""Turn the SDKs' exceptions (and the raw transport errors a stream can raise) into our named
`ProviderError`s, with the server's own message and never the API key.

Both SDKs share the shape this relies on: a base API error class with `body`, a status error
subclass with `status_code` and `response`, and a connection error class whose cause chain holds
the transport exception. The transport exception decides the name: a connect failure is
`EndpointUnreachable`, a read/write timeout is `SilenceTimeout`, a reset or a half-closed answer
is `ConnectionDropped`. An error event inside a started stream (OpenAI and vLLM send
`data: {"error": ...}`, Anthropic `event: error`) is a `StreamErrorEvent`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from speedproof.agents.providers.base import ProviderError
from speedproof.agents.providers.credentials import ApiKey, redact
from speedproof.agents.providers.errors import (
    ConnectionDropped,
    EndpointStatusError,
    EndpointUnreachable,
    SilenceTimeout,
    StreamErrorEvent,
)

# A server message longer than this is cut: enough for any real error text, short enough for
# one log line.
MESSAGE_LIMIT = 500

_DROPPED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError, ConnectionError)
_UNREACHABLE = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.UnsupportedProtocol)

_HINTS = {
    401: "the endpoint refused the API key from {source}",
    403: "the API key from {source} may not use this model or endpoint",
    404: "the model or the path does not exist on this endpoint",
}


@dataclass(frozen=True)
class SdkErrors:
    """One SDK's error classes: every API error, HTTP status errors, connection errors."""

    base: type[Exception]
    status: type[Exception]
    connection: type[Exception]


def _chain(err: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _error_type(body: object) -> str | None:
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    found = inner.get("type") if isinstance(inner, Mapping) else None
    return found if isinstance(found, str) else None


def _stream_error(err: Any, where: str, key: ApiKey) -> StreamErrorEvent:
    body = getattr(err, "body", None)
    said = server_message(body, str(err))[:MESSAGE_LIMIT]
    kind = _error_type(body)
    message = f"{where}: the answer stream carried an error ({kind or 'untyped'}): {said}"
    return StreamErrorEvent(redact(message, key), error_type=kind)


def server_message(body: object, text: str) -> str:
    """The human part of an error body: `error.message` (OpenAI and Anthropic both nest it
    so), else `message`, else the raw text."""
    found: object = None
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            found = inner.get("message")
    if isinstance(found, str) and found:
        return found
    if isinstance(body, str) and body:
        return body
    return text or (json.dumps(body) if body is not None else "")


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` (or `retry-after-ms`) in seconds when it is a finite number, else None."""
    millis = headers.get("retry-after-ms")
    seconds = headers.get("retry-after")
    for raw, scale in ((millis, 0.001), (seconds, 1.0)):
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value
    return None


def _status_error(err: Any, where: str, key: ApiKey) -> EndpointStatusError:
    status = int(err.status_code)
    response: httpx2.Response = err.response
    try:
        text = response.text.strip()
    except httpx2.ResponseNotRead:
        text = ""
    said = server_message(err.body, text)[:MESSAGE_LIMIT]
    hint = _HINTS.get(status, "").format(source=key.source)
    message = f"{where}: HTTP {status}: {said or '(no message)'}"
    if hint:
        message += f" ({hint})"
    return EndpointStatusError(
        redact(message, key), status=status, retry_after_s=retry_after_seconds(response.headers)
    )


def _transport_error(err: BaseException, where: str, silence_s: float) -> ProviderError:
    chain = list(_chain(err))
    unreachable = next((e for e in chain if isinstance(e, _UNREACHABLE)), None)
    if unreachable is not None:
        return EndpointUnreachable(
            f"{where} does not answer: {type(unreachable).__name__}: {unreachable}"
        )
    if any(isinstance(e, httpx2.TimeoutException) for e in chain):
        return SilenceTimeout(
            f"{where} sent nothing for {silence_s:g} s (silence timeout); the call was abandoned"
        )
    dropped = next((e for e in chain if isinstance(e, _DROPPED)), None)
    if dropped is not None:
        return ConnectionDropped(f"{where} dropped the connection: {type(dropped).__name__}")
    return EndpointUnreachable(f"{where} failed: {type(err).__name__}: {err}")


def translate(
    err: BaseException, sdk: SdkErrors, *, where: str, key: ApiKey, silence_s: float
) -> ProviderError | None:
    """The named error for `err`, or None when `err` is not a network or HTTP failure (a bug
    in our code must surface as itself, not as a provider error)."""
    if isinstance(err, sdk.status):
        if int(getattr(err, "status_code", 0)) < 400:
            return _stream_error(err, where, key)
        return _status_error(err, where, key)
    if isinstance(err, (sdk.connection, httpx2.TransportError)):
        found = _transport_error(err, where, silence_s)
        return type(found)(redact(str(found), key))
    if isinstance(err, sdk.base):
        return _stream_error(err, where, key)
    return None
