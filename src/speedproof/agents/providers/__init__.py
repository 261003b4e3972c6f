"""Model providers behind one tiny protocol, so callers never know which model answers."""

from speedproof.agents.providers.base import ChatMessage, Completion, Provider, ProviderError
from speedproof.agents.providers.replay import ReplayMissing, ReplayProvider, messages_digest

__all__ = [
    "ChatMessage",
    "Completion",
    "Provider",
    "ProviderError",
    "ReplayMissing",
    "ReplayProvider",
    "messages_digest",
]
