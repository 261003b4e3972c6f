"""The drift canary: compare two baselines of the same questions over the same reference set,
answer by answer, and count the decisions that change.

Summary statistics can hold while decisions flip: answers that move a little in both directions
leave every question's mean where it was, yet an answer near a gate crosses it. So the report
gives, beside each question's mean shift, the paired mean |delta| over every (question, item)
answer, and then the decisions themselves, each build judged against its own baseline (its own
usual answers) with the same gates and the same code vetoes: how many reference functions get a
different set of flagged causes, how many a different top-ranked cause (the flag the optimizer
is shown first), and how many fixes a different set of flagged hazards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from speedproof.advisor.baseline import Baseline
from speedproof.advisor.errors import BaselineMismatch
from speedproof.advisor.flags import CauseFlag, FunctionFlags
from speedproof.advisor.gates import Gates, judge
from speedproof.advisor.questions import ALL_QUESTIONS, BY_ID, CAUSE_QUESTIONS, HAZARD_QUESTIONS
from speedproof.advisor.reference import ReferenceItem, ReferenceSet
from speedproof.advisor.vetoes import vetoes_for


@dataclass(frozen=True)
class QuestionDrift:
    question: str
    kind: str
    old_mean: float
    new_mean: float
    shift: float
    old_sd: float
    new_sd: float
    paired_mean_abs: float
    n: int


@dataclass(frozen=True)
class Flip:
    item: str
    old: tuple[str, ...]
    new: tuple[str, ...]


@dataclass(frozen=True)
class DriftReport:
    old_model: str
    new_model: str
    questions: tuple[QuestionDrift, ...]
    pairs: int
    paired_mean_abs: float
    cause_items: int
    flagged_set_flips: tuple[Flip, ...]
    top_cause_flips: tuple[Flip, ...]
    hazard_items: int
    hazard_set_flips: tuple[Flip, ...]

    @property
    def max_abs_shift(self) -> float:
        return max(abs(q.shift) for q in self.questions)

    @property
    def decisions_flip(self) -> bool:
        return bool(self.flagged_set_flips or self.top_cause_flips or self.hazard_set_flips)

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def _agree(old: Baseline, new: Baseline, reference: ReferenceSet) -> None:
    if old.questions_digest != new.questions_digest:
        raise BaselineMismatch("the two baselines were measured with different questions")
    for baseline in (old, new):
        if baseline.reference_digest != reference.digest:
            raise BaselineMismatch(
                f"the baseline for {baseline.model} was measured over another reference set "
                f"({baseline.reference_digest[:12]}, shipped {reference.digest[:12]})"
            )


def _question(question: str, old: Baseline, new: Baseline) -> QuestionDrift:
    items = sorted(set(old.answers[question]) & set(new.answers[question]))
    before = np.array([old.answers[question][i] for i in items], dtype=float)
    after = np.array([new.answers[question][i] for i in items], dtype=float)
    a, b = old.stats[question], new.stats[question]
    return QuestionDrift(
        question=question,
        kind=BY_ID[question].kind,
        old_mean=a.mean,
        new_mean=b.mean,
        shift=round(b.mean - a.mean, 6),
        old_sd=a.sd,
        new_sd=b.sd,
        paired_mean_abs=round(float(np.abs(after - before).mean()), 6),
        n=len(items),
    )


def _causes(
    item: ReferenceItem, baseline: Baseline, gates: Gates, vetoes: dict[str, str]
) -> FunctionFlags:
    found = []
    for question in CAUSE_QUESTIONS:
        p = baseline.answers[question.id][item.id]
        judged = judge(p, baseline.usual(question.id), gates.cause)
        veto = vetoes.get(question.id) if judged.passed else None
        found.append(CauseFlag(item.id, question.id, p, judged.z, judged.outcome, veto))
    return FunctionFlags(item.id, 0.0, tuple(found))


def _hazards(item: ReferenceItem, baseline: Baseline, gates: Gates) -> tuple[str, ...]:
    return tuple(
        q.id
        for q in HAZARD_QUESTIONS
        if judge(baseline.answers[q.id][item.id], baseline.usual(q.id), gates.hazard).passed
    )


def compare(old: Baseline, new: Baseline, *, reference: ReferenceSet, gates: Gates) -> DriftReport:
    _agree(old, new, reference)
    shared = [q.id for q in ALL_QUESTIONS if q.id in old.answers and q.id in new.answers]
    drifts = tuple(_question(q, old, new) for q in shared)
    deltas = [
        abs(new.answers[q][i] - old.answers[q][i])
        for q in old.answers
        if q in new.answers
        for i in old.answers[q]
        if i in new.answers[q]
    ]
    set_flips, top_flips, hazard_flips = [], [], []
    for item in reference.items:
        vetoes = vetoes_for(item.subject)
        before, after = _causes(item, old, gates, vetoes), _causes(item, new, gates, vetoes)
        old_set = tuple(sorted(c.cause for c in before.flagged))
        new_set = tuple(sorted(c.cause for c in after.flagged))
        if old_set != new_set:
            set_flips.append(Flip(item.id, old_set, new_set))
        old_top = (before.top.cause,) if before.top else ()
        new_top = (after.top.cause,) if after.top else ()
        if old_top != new_top:
            top_flips.append(Flip(item.id, old_top, new_top))
    for item in reference.fixes:
        old_hazards, new_hazards = _hazards(item, old, gates), _hazards(item, new, gates)
        if old_hazards != new_hazards:
            hazard_flips.append(Flip(item.id, old_hazards, new_hazards))
    return DriftReport(
        old_model=old.model,
        new_model=new.model,
        questions=drifts,
        pairs=len(deltas),
        paired_mean_abs=round(float(np.mean(deltas)), 6) if deltas else 0.0,
        cause_items=len(reference.items),
        flagged_set_flips=tuple(set_flips),
        top_cause_flips=tuple(top_flips),
        hazard_items=len(reference.fixes),
        hazard_set_flips=tuple(hazard_flips),
    )
