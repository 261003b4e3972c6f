"""Many cases' conversations with a provider at once, each answer judged on a cluster.

`fn collect` and `fn eval` both run up to N attempts per case, each failed attempt followed by
category-only feedback. Cases go in chunks of twice the cluster's slots; within a chunk the
attempts go in rounds: round k asks the provider for attempt k of every open case, in case
order, submits every answer to the cluster, and waits for all their verdicts. The provider is
so asked in the same order on every run (a recording replays the same way, whatever the
workers), while the verifications of a round run side by side.

A dialogue is finished when its rules say so (a pass; in evaluation, an infrastructure verdict
too) or its attempts are spent. Finished dialogues reach `on_finished` in case order, each as
soon as every earlier case of its chunk is finished. When the provider fails, or the rules halt
the run (collection halts on an infrastructure verdict, which leaves that case for the next
run), the verdicts already asked for are still awaited and every finished dialogue is handed
over before the error is raised: nothing already verified is lost.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from speedproof.agents.providers.base import ChatMessage, Completion, Provider
from speedproof.cluster.jobs import Batch, Cluster
from speedproof.corpus.grading import Answer, Judged, judge_task, settle
from speedproof.corpus.prompts import build_messages, retry_messages
from speedproof.functions.case import Case, model_view
from speedproof.ground.errors import InfrastructureError


@dataclass(frozen=True)
class Turn:
    """One attempt: the conversation the provider was shown, its answer and the verdict."""

    attempt: int
    messages: list[ChatMessage]
    completion: Completion
    judged: Judged


@dataclass
class Dialogue:
    """One case's conversation so far."""

    case: Case
    seed: int | None
    messages: list[ChatMessage]
    turns: list[Turn] = field(default_factory=list)
    finished: bool = False
    handed: bool = False


def _never(judged: Judged) -> bool:
    return False


@dataclass(frozen=True)
class Rules:
    """How many attempts, which provider role, when a dialogue ends, and when the run stops."""

    attempts: int
    role: str
    final: Callable[[Judged], bool]
    halt: Callable[[Judged], bool] = _never


@dataclass(frozen=True)
class _Round:
    attempt: int
    rules: Rules
    digest: str


_Asked = dict[int, tuple[Dialogue, Completion, Answer]]


def converse(
    cases: Sequence[Case],
    provider: Provider,
    rules: Rules,
    cluster: Cluster,
    on_finished: Callable[[Dialogue], None],
    seeds: Callable[[Case], int | None] | None = None,
) -> None:
    """Run every case's dialogue; see the module docstring. `seeds(case)` fixes a case's hidden
    inputs for all its attempts; without it each attempt draws a fresh seed here."""
    from speedproof.functions.verifier import verifier_digest

    digest = verifier_digest()
    size = 2 * cluster.slots
    for start in range(0, len(cases), size):
        chunk = [
            Dialogue(case, seeds(case) if seeds else None, build_messages(model_view(case)))
            for case in cases[start : start + size]
        ]
        try:
            for attempt in range(1, rules.attempts + 1):
                talking = [d for d in chunk if not d.finished]
                if not talking:
                    break
                _round(talking, _Round(attempt, rules, digest), provider, cluster)
                _hand_over(chunk, on_finished, in_order=True)
        finally:
            _hand_over(chunk, on_finished, in_order=False)


def _round(talking: list[Dialogue], step: _Round, provider: Provider, cluster: Cluster) -> None:
    asked: _Asked = {}
    with cluster.batch(judge_task) as batch:
        try:
            for dialogue in talking:
                completion = provider.complete(dialogue.messages, role=step.rules.role)
                seed = secrets.randbits(62) if dialogue.seed is None else dialogue.seed
                answer = Answer(dialogue.case, completion.text, seed)
                asked[batch.submit(answer)] = (dialogue, completion, answer)
        finally:
            halted = _await(batch, asked, step)
    if halted is not None:
        raise InfrastructureError(
            f"the verifier could not judge case {halted.case.id} "
            f"({halted.turns[-1].judged.status}): {halted.turns[-1].judged.detail}"
        )


def _await(batch: Batch[Answer, Judged], asked: _Asked, step: _Round) -> Dialogue | None:
    """Every verdict of the round into its dialogue; the first dialogue that halts the run."""
    halted: Dialogue | None = None
    while batch.pending:
        finished = batch.next_finished()
        dialogue, completion, answer = asked[finished.job]
        judged = settle(answer, finished, step.digest)
        dialogue.turns.append(Turn(step.attempt, dialogue.messages, completion, judged))
        if step.rules.halt(judged):
            halted = halted or dialogue
        elif step.rules.final(judged) or step.attempt >= step.rules.attempts:
            dialogue.finished = True
        else:
            dialogue.messages = retry_messages(dialogue.messages, completion.text, judged.category)
    return halted


def _hand_over(
    chunk: list[Dialogue], on_finished: Callable[[Dialogue], None], *, in_order: bool
) -> None:
    for dialogue in chunk:
        if dialogue.handed:
            continue
        if not dialogue.finished:
            if in_order:
                return
            continue
        dialogue.handed = True
        on_finished(dialogue)
