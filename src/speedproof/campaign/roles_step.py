"""The role turns of a campaign: coordinator, analyst, optimizer and reviewer each iteration, the
explorer once a campaign.

Each turn goes through `agents.roles.ask` (one repair turn for an unusable answer) and every
completion it made, the repair included, becomes a role call with its tokens, cost and whether
its text was usable. Answers only steer: the coordinator picks what to attack, the analyst names
causes, the optimizer writes a change, the reviewer argues against it, the explorer proposes
workloads to profile; none of them can reach a verdict.

The coordinator may answer with an empty `function`, which means "nothing left to try". That is
an answer, not a malformed one: the schema accepts it, so it is never sent back for repair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel

from speedproof.agents.answers import (
    AnalystAnswer,
    CoordinatorAnswer,
)
from speedproof.agents.prompts import RoleName, repair_prompt
from speedproof.agents.providers.base import ChatMessage, Completion, Provider
from speedproof.agents.providers.replay import messages_digest
from speedproof.agents.roles import UnusableAnswer, ask, messages_for, read_answer
from speedproof.campaign.records import Recorder
from speedproof.ledger import RoleCall


@dataclass(frozen=True)
class Choice:
    """The coordinator's pick: a function, nothing left, or a named rejection."""

    function: str | None
    rationale: str = ""
    nothing_left: bool = False
    rejection: str | None = None


@dataclass(frozen=True)
class Answer:
    """A role's validated answer or its named rejection."""

    value: BaseModel | None
    rejection: str | None


class Roles:
    """Asks the roles for one target and records every completion."""

    def __init__(
        self, provider: Provider, provider_name: str, target: dict[str, str], recorder: Recorder
    ) -> None:
        self.provider = provider
        self.provider_name = provider_name
        self.target = target
        self.recorder = recorder

    def context(self, role: RoleName, **facts: Any) -> dict[str, Any]:
        return {"target": self.target, "role": role, **facts}

    # ----- the roles ----------------------------------------------------------------------

    def coordinator(
        self, hot: list[dict[str, Any]], history: list[dict[str, Any]], flags: list[dict[str, Any]]
    ) -> Choice:
        context = self.context("coordinator", hot_functions=hot, history=history, flags=flags)
        found = self._ask("coordinator", context)
        if found.value is None:
            return Choice(None, rejection=found.rejection)
        answer = cast(CoordinatorAnswer, found.value)
        if not answer.function.strip():
            # `{"function": ""}`: the coordinator's way of saying no function is worth a try.
            return Choice(None, answer.rationale or "nothing left to try", nothing_left=True)
        return Choice(answer.function, answer.rationale)

    def explorer(self, workloads: list[dict[str, Any]], hot: list[dict[str, Any]]) -> Answer:
        """Extra workloads to profile, given the non-holdout workloads and the hot list."""
        context = self.context("explorer", workloads=workloads, hot_functions=hot)
        return self._ask("explorer", context)

    def analyst(self, function: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
        """CauseViews for `function` (a HotFunctionView with its source), or a rejection."""
        found = self._ask("analyst", self.context("analyst", hot_functions=[function]))
        if found.value is None:
            return [], found.rejection
        answer = cast(AnalystAnswer, found.value)
        causes = [
            {
                "function": claim.function,
                "cause": claim.cause,
                "probability": claim.confidence,
                "source": "analyst",
                "evidence": claim.evidence,
            }
            for claim in answer.causes
        ]
        return causes, None

    def optimizer(
        self,
        *,
        function: dict[str, Any],
        file: dict[str, str],
        history: list[dict[str, Any]],
        concerns: list[str],
        causes: list[dict[str, Any]],
    ) -> Answer:
        context = self.context(
            "optimizer",
            function=function,
            file=file,
            history=history,
            concerns=concerns,
            causes=causes,
        )
        return self._ask("optimizer", context)

    def reviewer(self, *, diff: str, function: dict[str, Any], hypothesis: str) -> Answer:
        context = self.context("reviewer", diff=diff, function=function, hypothesis=hypothesis)
        return self._ask("reviewer", context)

    # ----- calls and records --------------------------------------------------------------

    def _ask(self, role: RoleName, context: dict[str, Any]) -> Answer:
        result = ask(role, self.provider, context)
        conversation = messages_for(role, context)
        for completion in result.completions:
            try:
                read_answer(role, completion.text)
            except UnusableAnswer as unusable:
                self._record(role, completion, conversation, ok=False, rejection=unusable.reason)
                conversation = [
                    *conversation,
                    ChatMessage(role="assistant", content=completion.text),
                    ChatMessage(role="user", content=repair_prompt(unusable.reason)),
                ]
                continue
            self._record(role, completion, conversation, ok=True, rejection=None)
        rejection = None if result.rejection is None else f"{role} {result.rejection}"
        return Answer(result.answer, rejection)

    def _record(
        self,
        role: RoleName,
        completion: Completion,
        messages: list[ChatMessage],
        *,
        ok: bool,
        rejection: str | None,
    ) -> None:
        self.recorder.call(
            RoleCall(
                campaign=self.recorder.campaign,
                candidate_id=None,
                role=role,
                provider=completion.provider or self.provider_name,
                model=completion.model,
                input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens,
                cost_usd=completion.cost_usd,
                duration_s=completion.duration_s,
                ok=ok,
                rejection=rejection,
                prompt_sha256=messages_digest(messages),
                answer=completion.text,
            )
        )
