"""The role turns of a campaign: coordinator, analyst, optimizer and reviewer each iteration, the
explorer once a campaign.

Each turn goes through `agents.roles.ask` (one repair turn for an unusable answer) and every
completion it made, the repair included, becomes a role call with its tokens, cost and whether
its text was usable. Answers only steer: the coordinator picks what to attack, the analyst names
causes, the optimizer writes a change, the reviewer argues against it, the explorer proposes
workloads to profile; none of them can reach a verdict.

The coordinator may answer with an empty `function`, which means "nothing left to try". That is
an answer, not a malformed one, so it is read before the schema (which requires a name) and is
never sent back for repair.
"""

from __future__ import annotations

import json
import re
import time
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

_FENCED = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.DOTALL)


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
        messages = messages_for("coordinator", context)
        first = self._complete_coordinator(messages)
        if _nothing_left(first.text):
            self._record("coordinator", first, messages, ok=True, rejection=None)
            return Choice(None, _rationale(first.text), nothing_left=True)
        try:
            answer = cast(CoordinatorAnswer, read_answer("coordinator", first.text))
        except UnusableAnswer as unusable:
            self._record("coordinator", first, messages, ok=False, rejection=unusable.reason)
            return self._repaired_coordinator(messages, first, unusable.reason)
        self._record("coordinator", first, messages, ok=True, rejection=None)
        return Choice(answer.function, answer.rationale)

    def _repaired_coordinator(
        self, messages: list[ChatMessage], first: Completion, reason: str
    ) -> Choice:
        retry = [
            *messages,
            ChatMessage(role="assistant", content=first.text),
            ChatMessage(role="user", content=repair_prompt(reason)),
        ]
        second = self._complete_coordinator(retry)
        if _nothing_left(second.text):
            self._record("coordinator", second, retry, ok=True, rejection=None)
            return Choice(None, _rationale(second.text), nothing_left=True)
        try:
            answer = cast(CoordinatorAnswer, read_answer("coordinator", second.text))
        except UnusableAnswer as unusable:
            self._record("coordinator", second, retry, ok=False, rejection=unusable.reason)
            return Choice(None, rejection=f"coordinator {unusable.reason}")
        self._record("coordinator", second, retry, ok=True, rejection=None)
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

    def _complete_coordinator(self, messages: list[ChatMessage]) -> Completion:
        started = time.monotonic()
        completion = self.provider.complete(messages, role="coordinator")
        if not completion.duration_s:
            completion = completion.model_copy(update={"duration_s": time.monotonic() - started})
        return completion

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


def _json_object(text: str) -> dict[str, Any] | None:
    for chunk in (text.strip(), *(m.strip() for m in _FENCED.findall(text))):
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _nothing_left(text: str) -> bool:
    """`{"function": "", …}`: the coordinator's way of saying no function is worth a try."""
    value = _json_object(text)
    if value is None:
        return False
    function = value.get("function")
    return isinstance(function, str) and not function.strip()


def _rationale(text: str) -> str:
    value = _json_object(text) or {}
    rationale = value.get("rationale")
    return rationale if isinstance(rationale, str) and rationale else "nothing left to try"
