"""The heuristic provider: speedproof's offline default proposer.

It answers every role from the `<context>` block that ends the last user message, exactly what
a hosted model is shown, with the deterministic rules of `speedproof.agents.heuristic`. It
costs nothing, needs no network and gives the same answer to the same conversation, which
makes a whole campaign reproducible without a model.

An empty `function` in a coordinator answer means "nothing left to try"; an optimizer asked
about a function no untried rule can rewrite raises `NoRuleApplies` (a ProviderError), which
names the function and the rules its text shows.
"""

from __future__ import annotations

import time

from speedproof.agents.context import OPEN, ContextError, extract_context
from speedproof.agents.heuristic import RULESET_VERSION, roles
from speedproof.agents.heuristic.subject import NoRuleApplies
from speedproof.agents.providers.base import ChatMessage, Completion, ProviderError

MODEL = f"heuristic-{RULESET_VERSION}"

__all__ = ["MODEL", "HeuristicProvider", "NoRuleApplies"]


class HeuristicProvider:
    """Answers the campaign's roles with structural rules instead of a model."""

    name = "heuristic"

    def complete(self, messages: list[ChatMessage], *, role: str) -> Completion:
        started = time.monotonic()
        # A repair turn ends with a user message of its own; the facts are still in the last
        # user message that carries a context block, and a rule answers them the same way.
        with_context = [m for m in messages if m.role == "user" and OPEN in m.content]
        if not with_context:
            raise ProviderError("the heuristic provider needs a user message with a context")
        try:
            context = extract_context(with_context[-1].content)
        except ContextError as err:
            raise ProviderError(f"the heuristic provider cannot read the context: {err}") from err
        stated = context.get("role")
        if stated is not None and stated != role:
            raise ProviderError(f"asked for role {role!r} with a context for role {stated!r}")
        text = roles.answer(role, context)
        return Completion(
            text=text,
            model=MODEL,
            provider=self.name,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
            duration_s=time.monotonic() - started,
        )
