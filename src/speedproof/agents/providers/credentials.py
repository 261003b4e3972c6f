"""Where a provider's endpoint and API key come from, and keeping the key out of every text.

Rules:
- The base URL is only ever the one given (or the vendor's public endpoint when none is given);
  variables such as `OPENAI_BASE_URL` and `ANTHROPIC_BASE_URL` are not consulted, so where a
  conversation goes is always visible in the configuration. It must be `http(s)://host[:port]...`.
- The key is read from the environment: the variable named by `api_key_env` when given (it must
  then be set), else the vendor's default (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). The key goes
  to whichever endpoint the base URL names.
- A loopback endpoint (127.0.0.0/8, ::1, `localhost`) with no key set gets the fixed placeholder
  `LOCAL_PLACEHOLDER_KEY`: local servers (vLLM, Ollama, llama.cpp) ignore the key but the SDKs
  insist on one. Any other host without a key is a `ProviderConfigError`, never an anonymous call.
- The key lives only inside the SDK client. Provider reprs and error messages name the variable,
  never the value, and `redact` strips the value from any text a server sends back.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from speedproof.agents.providers.errors import ProviderConfigError

LOCAL_PLACEHOLDER_KEY = "speedproof-local-no-key"
REDACTED = "[redacted]"


@dataclass(frozen=True)
class ApiKey:
    """A key and the variable it came from. The value never appears in repr or str."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r})"

    __str__ = __repr__


def endpoint_host(base_url: str) -> str:
    """The host of `base_url`, lower-case, without port or brackets."""
    return (urlsplit(base_url).hostname or "").lower()


def check_base_url(base_url: str) -> str:
    """`base_url` without a trailing slash, or a `ProviderConfigError` saying what is wrong."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProviderConfigError(
            f"base URL {base_url!r} is not an http(s) URL with a host "
            "(e.g. http://127.0.0.1:8000/v1)"
        )
    if parts.username or parts.password:
        raise ProviderConfigError(
            "base URL carries credentials; put the key in an environment variable instead"
        )
    return base_url.rstrip("/")


def is_loopback(base_url: str) -> bool:
    """True when `base_url` names this machine (127.0.0.0/8, ::1 or `localhost`)."""
    host = endpoint_host(base_url)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_api_key(*, base_url: str, default_env: str, api_key_env: str | None) -> ApiKey:
    """The key for `base_url` under the rules in the module docstring."""
    variable = api_key_env or default_env
    value = os.environ.get(variable, "").strip()
    if value:
        return ApiKey(value, variable)
    if api_key_env is not None:
        raise ProviderConfigError(f"the API key variable {api_key_env} is not set or empty")
    if is_loopback(base_url):
        return ApiKey(LOCAL_PLACEHOLDER_KEY, "loopback placeholder")
    raise ProviderConfigError(
        f"no API key for {base_url}: set {default_env} (or name another variable); "
        "only a loopback endpoint may be called without one"
    )


def redact(text: str, key: ApiKey) -> str:
    """`text` with every occurrence of the key's value replaced by `[redacted]`."""
    if key.value == LOCAL_PLACEHOLDER_KEY or not key.value:
        return text
    return text.replace(key.value, REDACTED)
