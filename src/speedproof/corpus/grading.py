"""One model answer, judged: verify the patch and name the failure category.

Categories (the anchor's five, plus passed and infrastructure):
  passed               correct and measurably faster
  formatting           no SEARCH/REPLACE block or unified diff could be read from the answer
  invalid_patch        a patch was read but does not apply, or the result leaves the subset
  missed_optimization  correct, not faster, and the loop skeleton is unchanged: no rewrite
  correct_not_faster   correct and restructured, but not faster
  semantic_failure     a different result, an exception, a time-out or a resource limit
  infrastructure       the verifier could not judge (sandbox, tool or measurement trouble);
                       never counted as a model failure
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from speedproof.cluster.jobs import Finished
from speedproof.corpus.skeleton import loop_skeleton
from speedproof.functions.case import Case
from speedproof.functions.reward_scale import WRONG_REWARD
from speedproof.ground.errors import PatchError

Category = Literal[
    "passed",
    "formatting",
    "invalid_patch",
    "missed_optimization",
    "correct_not_faster",
    "semantic_failure",
    "infrastructure",
]
CATEGORIES: tuple[Category, ...] = (
    "passed",
    "formatting",
    "invalid_patch",
    "missed_optimization",
    "correct_not_faster",
    "semantic_failure",
    "infrastructure",
)
MODEL_FAILURES: tuple[Category, ...] = CATEGORIES[1:-1]

_STATUS: dict[str, Category] = {
    "passed": "passed",
    "no_speedup": "correct_not_faster",
    "mismatch": "semantic_failure",
    "candidate_error": "semantic_failure",
    "timeout": "semantic_failure",
    "resource_limit": "semantic_failure",
    "policy_error": "invalid_patch",
    "patch_error": "invalid_patch",
    "unstable": "infrastructure",
    "infrastructure_error": "infrastructure",
}
_HAS_PATCH = re.compile(r"^(<{5,9} SEARCH|--- |\+\+\+ |@@ )", re.MULTILINE)


@dataclass(frozen=True)
class Judged:
    """The verdict on one answer. `detail` is trusted-side text: never shown to a model."""

    category: Category
    status: str
    reward: float | None  # None when the verifier could not judge
    detail: str
    candidate_source: str | None
    verifier_digest: str
    ref_ir: int | None = None
    cand_ir: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class Answer:
    """A model's answer to a case, as a job of the execution layer (`judge_task`). The seed is
    fixed by the driver, so a job that runs again after its worker died reaches the same
    verdict."""

    case: Case
    text: str
    seed: int | None = None


def judge_task(answer: Answer) -> Judged:
    """What a worker runs on an `Answer`: `judge_answer`."""
    return judge_answer(answer.case, answer.text, answer.seed)


def unjudged(answer: Answer, detail: str, digest: str) -> Judged:
    """The verdict on an answer whose job produced none (its worker was lost, or runs another
    verifier): infrastructure, no reward."""
    return Judged(
        "infrastructure", "infrastructure_error", None, detail, None, digest, seed=answer.seed
    )


def settle(answer: Answer, finished: Finished[Judged], digest: str) -> Judged:
    """The verdict the driver keeps for a finished `judge_task` job."""
    judged = finished.value
    if judged is None:
        return unjudged(answer, f"the job did not finish: {finished.error}", digest)
    if judged.verifier_digest != digest:
        return unjudged(answer, f"worker {finished.node} runs another verifier", digest)
    return judged


def has_patch(text: str) -> bool:
    return _HAS_PATCH.search(text) is not None


def category_of(status: str, reference: str, candidate: str | None) -> Category:
    """Map a verifier status to a category; a no-speedup without a new skeleton is a miss."""
    category = _STATUS.get(status)
    if category is None:
        raise ValueError(f"unknown verifier status {status!r}")
    if category == "correct_not_faster" and candidate is not None:
        try:
            if loop_skeleton(candidate) == loop_skeleton(reference):
                return "missed_optimization"
        except (SyntaxError, ValueError):
            return category
    return category


def judge_answer(case: Case, answer: str, seed: int | None = None) -> Judged:
    """Verify `answer` as a patch to the case's reference and categorise the outcome.

    `seed` draws the random and benchmark inputs (fresh when None); the verdict keeps it so that
    a reward can be reproduced, on the trusted side only.
    """
    from speedproof.functions.patches import apply_patch
    from speedproof.functions.verifier import verifier_digest, verify_patch

    if not has_patch(answer):
        return Judged(
            "formatting",
            "no_patch",
            WRONG_REWARD,
            "no patch block in the answer",
            None,
            verifier_digest(),
            seed=seed,
        )
    try:
        candidate: str | None = apply_patch(case.reference_source, answer)
    except PatchError:
        candidate = None
    result = verify_patch(case, answer, seed=seed)
    return Judged(
        category=category_of(result.status, case.reference_source, candidate),
        status=result.status,
        reward=result.reward,
        detail=result.detail,
        candidate_source=candidate,
        verifier_digest=result.verifier_digest,
        ref_ir=result.ref_ir,
        cand_ir=result.cand_ir,
        seed=seed,
    )
