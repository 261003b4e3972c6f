"""A baseline: one build's answers to every question over the reference set, and their mean and
standard deviation, stored with the model id and the digests they were measured under.

A baseline is valid for exactly one (model id, questions digest, reference digest): `check`
refuses any other, with no override, because a mean measured on one build or wording says
nothing about another. The shipped baseline (`reference/baseline-static-v1.json`) is the
offline static advisor's; a model's baseline is made with `speedproof advisor baseline`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from speedproof.advisor.answers import Answerer
from speedproof.advisor.errors import BaselineMismatch, ReferenceSetError
from speedproof.advisor.gates import Usual
from speedproof.advisor.questions import ALL_QUESTIONS, Question, questions_digest
from speedproof.advisor.reference import REFERENCE_PACKAGE, ReferenceItem, ReferenceSet
from speedproof.advisor.subject import Subject

SHIPPED_BASELINE = "reference/baseline-static-v1.json"
Progress = Callable[[int, int, str], None]


class QuestionStats(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    mean: float
    sd: float
    n: int = Field(ge=2)


class Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    format: Literal[1] = 1
    model: str
    questions_digest: str
    reference_digest: str
    measured_at: str
    note: str = ""
    stats: dict[str, QuestionStats]
    # question id -> reference item id -> P(yes)
    answers: dict[str, dict[str, float]]

    def usual(self, question_id: str) -> Usual:
        found = self.stats.get(question_id)
        if found is None:
            raise BaselineMismatch(f"the baseline for {self.model} has no question {question_id!r}")
        return Usual(found.mean, found.sd, found.n)

    def check(self, *, model: str, questions: str, reference: str) -> None:
        """Refuse this baseline unless it was measured for exactly this build and wording."""
        if self.model != model:
            raise BaselineMismatch(
                f"the baseline was measured for {self.model!r}, not {model!r}: measure one for "
                f"this build with `speedproof advisor baseline`"
            )
        if self.questions_digest != questions:
            raise BaselineMismatch(
                f"the baseline for {model} was measured with other questions "
                f"(digest {self.questions_digest[:12]}, now {questions[:12]})"
            )
        if self.reference_digest != reference:
            raise BaselineMismatch(
                f"the baseline for {model} was measured over another reference set "
                f"(digest {self.reference_digest[:12]}, now {reference[:12]})"
            )


def _subjects(question: Question, reference: ReferenceSet) -> list[tuple[ReferenceItem, Subject]]:
    if question.kind == "cause":
        return [(item, item.subject) for item in reference.items]
    found = []
    for item in reference.fixes:
        subject = item.hazard_subject
        if subject is not None:
            found.append((item, subject))
    return found


def measure_baseline(
    answerer: Answerer,
    reference: ReferenceSet,
    *,
    questions: tuple[Question, ...] = ALL_QUESTIONS,
    note: str = "",
    progress: Progress | None = None,
) -> Baseline:
    """Ask every question of every reference item (cause questions: every `before`; hazard
    questions: every fix's diff) and keep the answers with their mean and sd."""
    total = sum(len(_subjects(q, reference)) for q in questions)
    done = 0
    answers: dict[str, dict[str, float]] = {}
    stats: dict[str, QuestionStats] = {}
    for question in questions:
        per_item: dict[str, float] = {}
        for item, subject in _subjects(question, reference):
            per_item[item.id] = answerer.answer(question, subject).probability
            done += 1
            if progress is not None:
                progress(done, total, f"{question.id} {item.id}")
        if len(per_item) < 2:
            raise ReferenceSetError(f"question {question.id!r} has fewer than 2 reference items")
        values = np.array(list(per_item.values()), dtype=float)
        stats[question.id] = QuestionStats(
            mean=round(float(values.mean()), 6),
            sd=round(float(values.std(ddof=1)), 6),
            n=len(values),
        )
        answers[question.id] = per_item
    return Baseline(
        model=answerer.model_id,
        questions_digest=questions_digest(questions),
        reference_digest=reference.digest,
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        note=note,
        stats=stats,
        answers=answers,
    )


def load_baseline(path: Path) -> Baseline:
    try:
        return Baseline.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise BaselineMismatch(f"{path}: cannot read the baseline: {err}") from err
    except ValidationError as err:
        raise BaselineMismatch(f"{path}: not an advisor baseline: {err}") from err


def shipped_baseline() -> Baseline:
    text = resources.files(REFERENCE_PACKAGE).joinpath(SHIPPED_BASELINE).read_text("utf-8")
    return Baseline.model_validate_json(text)


def save_baseline(baseline: Baseline, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(baseline.model_dump(mode="json"), indent=1, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")
