"""One answer of the advisor, and the protocol every answerer (an endpoint, the offline static
detectors, a cache in front of either) follows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from speedproof.advisor.questions import Question
from speedproof.advisor.subject import Subject


@dataclass(frozen=True)
class Answer:
    """P(yes) for one question about one subject. `evidence` is what the static detectors
    found (empty for a model, which gives a probability and nothing else)."""

    question: str
    probability: float
    evidence: tuple[str, ...] = ()


class Answerer(Protocol):
    @property
    def model_id(self) -> str:
        """The exact build that answers: `openai:<id>` for an endpoint, `static-v1` offline."""
        ...

    def answer(self, asked: Question, subject: Subject) -> Answer: ...
