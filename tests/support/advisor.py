"""Fake advisor builds for the advisor tests: a real HTTP server whose answers carry
token log-probabilities chosen by a function of (question, subject digest).

Imported by the other test_advisor_* files; it holds no tests itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from speedproof.advisor.questions import ALL_QUESTIONS
from speedproof.advisor.reference import ReferenceSet
from support.model_server import ChatRequest, Reply

Probabilities = Callable[[str, str], float]


def logprob_reply(p: float, *, model: str | None = None, text: str | None = None) -> Reply:
    """An answer whose first token is Yes or No, with P(yes) = p among the alternatives.
    `text` overrides what is written (the probabilities stay)."""
    p = min(max(p, 1e-9), 1 - 1e-9)
    yes, no = math.log(p), math.log(1 - p)
    chosen = "Yes" if p >= 0.5 else "No"
    written = chosen if text is None else text
    top = {"Yes": yes, "No": no, "The": math.log(1e-6)}
    return Reply(written, model=model, tokens=[(written, top.get(written, yes), top)])


def build(
    probabilities: Probabilities, *, model: str | None = None
) -> Callable[[ChatRequest], Reply]:
    """A fake build: answers every advisor request with P(yes) = probabilities(q, digest)."""

    def answer(request: ChatRequest) -> Reply:
        context = request.context or {}
        return logprob_reply(
            probabilities(str(context["question"]), str(context["subject"])), model=model
        )

    return answer


def subjects_by_question(reference: ReferenceSet) -> dict[str, list[str]]:
    """question id -> the digests of the subjects it is asked about, sorted."""
    causes = sorted(item.subject.digest for item in reference.items)
    hazards = sorted(
        subject.digest for item in reference.fixes if (subject := item.hazard_subject) is not None
    )
    return {q.id: causes if q.kind == "cause" else hazards for q in ALL_QUESTIONS}


def spread_build(reference: ReferenceSet) -> Probabilities:
    """Build A: most answers 0.15, one in seven 0.85, and one in eleven sitting at 0.50,
    exactly on the probability gate."""
    order = subjects_by_question(reference)
    questions = [q.id for q in ALL_QUESTIONS]

    def probability(question: str, digest: str) -> float:
        index = order[question].index(digest)
        if index % 11 == 3:
            return 0.50
        if index % 7 == questions.index(question) % 7:
            return 0.85
        return 0.15

    return probability


def nudged(base: Probabilities, reference: ReferenceSet, delta: float) -> Probabilities:
    """Build B: every answer of `base` moved by +delta or -delta, alternating over each
    question's sorted subjects, so every question's mean stays where it was."""
    order = subjects_by_question(reference)

    def probability(question: str, digest: str) -> float:
        index = order[question].index(digest)
        sign = 1 if index % 2 == 0 else -1
        if len(order[question]) % 2 and index == len(order[question]) - 1:
            sign = 0
        return base(question, digest) + sign * delta

    return probability
