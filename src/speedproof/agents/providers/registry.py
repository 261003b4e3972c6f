"""Build a provider from a spec string, the one place that knows every kind of provider.

Accepted forms:

- `openai:MODEL`: an OpenAI-compatible endpoint (`OpenAICompatProvider`); the vendor's API by
  default, or any server given as `base_url` (e.g. `openai:qwen2.5-coder` with
  `base_url="http://127.0.0.1:8000/v1"` for vLLM). MODEL may hold `:` and `/`
  (`openai:qwen2.5-coder:7b`, `openai:openai/gpt-4o-mini` on OpenRouter).
- `anthropic:MODEL`: Anthropic's Messages API (`AnthropicProvider`), optionally at `base_url`.
- `replay:PATH`: answers recorded in a JSON-lines file (`ReplayProvider`).
- `heuristic`: the built-in offline proposer, `speedproof.agents.providers.heuristic.
  HeuristicProvider()`. It is imported only when asked for, by that path, so the registry works
  (and every other kind can be built) without it.

`base_url` and `api_key_env` only apply to the two hosted kinds; giving them with `replay` or
`heuristic` is an error rather than silently ignored. The SDK modules are imported only for the
kind that needs them; they come with the `llm` extra, and without it a hosted kind is a
one-line `MissingExtra` naming the spec and the extra (`speedproof.extras`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Literal, cast

from speedproof.agents.providers.base import Provider
from speedproof.agents.providers.errors import ProviderConfigError
from speedproof.agents.providers.retry import RetryPolicy
from speedproof.extras import require

Kind = Literal["openai", "anthropic", "replay", "heuristic"]
ACCEPTED_FORMS = ("openai:MODEL", "anthropic:MODEL", "replay:PATH", "heuristic")
# What each hosted kind's provider module imports from the `llm` extra: its SDK, and httpx2 for
# the transport errors (endpoint.py, sdk_failures.py).
SDK_MODULES: dict[str, tuple[str, ...]] = {
    "openai": ("openai", "httpx2"),
    "anthropic": ("anthropic", "httpx2"),
}
HEURISTIC_MODULE = "speedproof.agents.providers.heuristic"
HEURISTIC_CLASS = "HeuristicProvider"

_ACCEPTED = ", ".join(ACCEPTED_FORMS)


@dataclass(frozen=True)
class ProviderSpec:
    """A parsed spec: the kind and what follows the first `:` (empty for `heuristic`)."""

    kind: Kind
    argument: str

    def __str__(self) -> str:
        return self.kind if self.kind == "heuristic" else f"{self.kind}:{self.argument}"


def parse_spec(spec: str) -> ProviderSpec:
    """`spec` split into kind and argument, or a `ProviderConfigError` naming the forms."""
    text = spec.strip()
    if text == "heuristic":
        return ProviderSpec("heuristic", "")
    kind, sep, argument = text.partition(":")
    if kind in ("openai", "anthropic", "replay") and sep and argument.strip():
        return ProviderSpec(cast(Kind, kind), argument.strip())
    if kind in ("openai", "anthropic", "replay", "heuristic"):
        problem = f"provider spec {spec!r} is malformed"
    else:
        problem = f"unknown provider {kind!r} in spec {spec!r}"
    raise ProviderConfigError(f"{problem}; accepted forms: {_ACCEPTED}")


def require_sdk(kind: str, feature: str) -> None:
    """Import what `kind`'s provider module needs from the `llm` extra, or raise `MissingExtra`
    naming `feature`. Called before that module is imported, so a missing SDK is named with what
    the user asked for rather than surfacing as a ModuleNotFoundError from deep inside it."""
    for module in SDK_MODULES.get(kind, ()):
        require(module, feature)


def _heuristic() -> Provider:
    try:
        module = importlib.import_module(HEURISTIC_MODULE)
    except ModuleNotFoundError as err:
        if err.name != HEURISTIC_MODULE:
            raise
        raise ProviderConfigError(
            f"the heuristic provider is not installed ({HEURISTIC_MODULE} is missing)"
        ) from err
    factory = getattr(module, HEURISTIC_CLASS, None)
    if factory is None:
        raise ProviderConfigError(f"{HEURISTIC_MODULE} has no {HEURISTIC_CLASS}")
    return cast(Provider, factory())


def make_provider(
    spec: str,
    *,
    base_url: str | None = None,
    silence_timeout_s: float = 60,
    max_retries: int = 4,
    api_key_env: str | None = None,
) -> Provider:
    """The provider `spec` names (see the module docstring for the forms)."""
    parsed = parse_spec(spec)
    if parsed.kind in ("replay", "heuristic") and (base_url or api_key_env):
        raise ProviderConfigError(
            f"base_url and api_key_env apply to openai:/anthropic: specs, not to {parsed}"
        )
    if max_retries < 0:
        raise ProviderConfigError(f"max_retries must be >= 0, not {max_retries}")
    retry = RetryPolicy(max_retries=max_retries)
    require_sdk(parsed.kind, f"the model provider {parsed}")
    if parsed.kind == "openai":
        from speedproof.agents.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            parsed.argument,
            base_url=base_url,
            api_key_env=api_key_env,
            silence_timeout_s=silence_timeout_s,
            retry=retry,
        )
    if parsed.kind == "anthropic":
        from speedproof.agents.providers.anthropic_messages import AnthropicProvider

        return AnthropicProvider(
            parsed.argument,
            base_url=base_url,
            api_key_env=api_key_env,
            silence_timeout_s=silence_timeout_s,
            retry=retry,
        )
    if parsed.kind == "replay":
        from speedproof.agents.providers.replay import ReplayProvider

        return ReplayProvider(parsed.argument)
    return _heuristic()
