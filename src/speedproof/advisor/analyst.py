"""The advisor in the analyst's and the reviewer's seats.

`AdvisorAnalyst.causes(hot)` asks the seven cause questions of each of the first
`max_functions` hot functions, judges every answer against the baseline's usual answer, and lets
code veto flags it knows to be wrong. `AdvisorReviewer.hazards(diff, function)` asks the eight
hazard questions of a candidate diff at the stricter hazard gate.

Both refuse to start unless the baseline was measured for exactly the answering build, the
current questions and the shipped reference set. What they return is advice: it orders targets
and becomes concerns, and nothing of it is evidence (the policy cannot import this package).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from speedproof.advisor.answers import Answerer
from speedproof.advisor.baseline import Baseline
from speedproof.advisor.flags import AdvisorFlags, CauseFlag, FunctionFlags, Hazard, HazardReview
from speedproof.advisor.gates import Gates, judge
from speedproof.advisor.questions import CAUSE_QUESTIONS, HAZARD_QUESTIONS, questions_digest
from speedproof.advisor.reference import load_reference
from speedproof.advisor.subject import Subject, subject_of
from speedproof.advisor.vetoes import vetoes_for
from speedproof.discovery import HotFunction

ReadFile = Callable[[str], str]


def _checked(answerer: Answerer, baseline: Baseline) -> None:
    baseline.check(
        model=answerer.model_id,
        questions=questions_digest(),
        reference=load_reference().digest,
    )


class AdvisorAnalyst:
    """Cause flags for hot functions. `read_file(path)` (target-relative) gives the whole file,
    which the vetoes read (a method's receiver fields, a class's attributes); without it they
    see the function alone."""

    def __init__(
        self,
        answerer: Answerer,
        baseline: Baseline,
        *,
        gates: Gates | None = None,
        max_functions: int = 12,
        read_file: ReadFile | None = None,
    ) -> None:
        _checked(answerer, baseline)
        self.answerer = answerer
        self.baseline = baseline
        self.gates = gates or Gates()
        self.max_functions = max_functions
        self.read_file = read_file

    def causes(self, hot: Sequence[HotFunction]) -> AdvisorFlags:
        functions = tuple(self.function_flags(f) for f in hot[: self.max_functions])
        return AdvisorFlags(
            model=self.answerer.model_id,
            baseline=self.baseline.reference_digest,
            gates=self.gates.to_record(),
            functions=functions,
        )

    def function_flags(self, function: HotFunction) -> FunctionFlags:
        file_text = self.read_file(function.file) if self.read_file is not None else None
        subject = subject_of(function, file_text=file_text)
        return FunctionFlags(function.name, function.self_pct, self.ask(subject))

    def ask(self, subject: Subject) -> tuple[CauseFlag, ...]:
        vetoes = vetoes_for(subject)
        found = []
        for question in CAUSE_QUESTIONS:
            answer = self.answerer.answer(question, subject)
            judged = judge(answer.probability, self.baseline.usual(question.id), self.gates.cause)
            found.append(
                CauseFlag(
                    function=subject.name,
                    cause=question.id,
                    probability=answer.probability,
                    z=judged.z,
                    outcome=judged.outcome,
                    veto=vetoes.get(question.id) if judged.passed else None,
                    evidence=answer.evidence,
                )
            )
        return tuple(found)


class AdvisorReviewer:
    """Hazard concerns about a candidate diff of one hot function."""

    def __init__(
        self,
        answerer: Answerer,
        baseline: Baseline,
        *,
        gates: Gates | None = None,
        read_file: ReadFile | None = None,
    ) -> None:
        _checked(answerer, baseline)
        self.answerer = answerer
        self.baseline = baseline
        self.gates = gates or Gates()
        self.read_file = read_file

    def hazards(self, diff: str, function: HotFunction) -> HazardReview:
        file_text = self.read_file(function.file) if self.read_file is not None else None
        subject = subject_of(function, file_text=file_text).with_diff(diff)
        found = []
        for question in HAZARD_QUESTIONS:
            answer = self.answerer.answer(question, subject)
            judged = judge(answer.probability, self.baseline.usual(question.id), self.gates.hazard)
            found.append(
                Hazard(question.id, answer.probability, judged.z, judged.outcome, answer.evidence)
            )
        return HazardReview(self.answerer.model_id, function.name, tuple(found))
