"""The offline advisor: deterministic structural detectors in place of a model, answering the
same questions with the same output shape, for when no endpoint is configured.

A detector's evidence weights add up to a strength s (`static_py`, `static_go`,
`static_hazards`), and P(yes) = 1 - 0.95 * exp(-1.6 * s): 0.05 with no evidence, 0.57 for one
weak piece (0.5), 0.81 for one direct piece (1.0), 0.96 for two. Only the shape matters to the
gates, which compare each answer with the same detector's answers over the reference set.

`STATIC_MODEL` names this rule set in every baseline; any change to a detector must change it,
and the test that re-measures the shipped baseline fails until it does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from speedproof.advisor.answers import Answer
from speedproof.advisor.errors import AdvisorConfigError
from speedproof.advisor.gofacts import GoFacts, read_go
from speedproof.advisor.pyfacts import PyFacts, read_python
from speedproof.advisor.questions import Question
from speedproof.advisor.sites import Evidence
from speedproof.advisor.static_go import DETECTORS as GO_DETECTORS
from speedproof.advisor.static_hazards import DETECTORS as HAZARD_DETECTORS
from speedproof.advisor.static_hazards import changed_lines
from speedproof.advisor.static_py import DETECTORS as PY_DETECTORS
from speedproof.advisor.subject import Subject

STATIC_MODEL = "static-v1"
P_NONE = 0.05
RATE = 1.6


def probability(evidence: Sequence[Evidence]) -> float:
    strength = sum(e.weight for e in evidence)
    return round(1.0 - (1.0 - P_NONE) * math.exp(-RATE * strength), 6)


class StaticAdvisor:
    """Answers from code structure alone; parses each subject once."""

    def __init__(self) -> None:
        self._facts: dict[str, PyFacts | GoFacts] = {}

    @property
    def model_id(self) -> str:
        return STATIC_MODEL

    def answer(self, asked: Question, subject: Subject) -> Answer:
        evidence = self.evidence(asked, subject)
        return Answer(asked.id, probability(evidence), tuple(e.text for e in evidence))

    def evidence(self, asked: Question, subject: Subject) -> list[Evidence]:
        if asked.kind == "hazard":
            if subject.diff is None:
                raise AdvisorConfigError(f"hazard question {asked.id!r} needs a diff")
            return HAZARD_DETECTORS[asked.id](changed_lines(subject.diff), subject)
        facts = self.facts(subject)
        if isinstance(facts, PyFacts):
            return PY_DETECTORS[asked.id](facts)
        return GO_DETECTORS[asked.id](facts)

    def facts(self, subject: Subject) -> PyFacts | GoFacts:
        key = subject.digest + (subject.file_text or "")
        found = self._facts.get(key)
        if found is None:
            found = read_python(subject) if subject.language == "python" else read_go(subject)
            self._facts[key] = found
        return found
