"""Rewards for trainers: a model's completion for a function-mode case, verified, as a number.

    reward(case, completion) -> float | None
    rewards(cases, completions, *, cluster=None, seed=None) -> list[float | None]
    TrainingReward(corpus)   # TRL's reward_funcs shape: f(prompts, completions, **kwargs)

A completion is read exactly as `fn eval` reads an answer (`corpus.grading.judge_answer`): the
SEARCH/REPLACE blocks or unified diff in it are applied to the case's reference, and the result
goes through the verifier. What comes back (`functions/reward_scale.py`, ADR 0065):

  passed                         log(ref_Ir / cand_Ir) on the charged counts, at least
                                 log(1.01) (a pass needs a 1 % gain)
  correct, not 1 % faster        0.5 * (ref_Ir / cand_Ir - 1) when slower, else 0.0: in (-0.5, 0]
  wrong (no patch, a patch that does not apply or changes nothing, outside the subset, another
  result, an exception, a time-out or a memory limit)   -1.0, below every correct answer
  not judged (sandbox or tool failure, unstable counts, a lost worker)   None, never a number

Every None is counted (`counts().infrastructure`): a trainer should watch it, since a None
says nothing about the completion and TRL leaves it out of the group's mean.

Completions of one case within one call share their hidden inputs (one seed per case per call),
so a GRPO group is compared on the same inputs; a fresh base seed per call keeps any input from
being seen twice (`seed=` fixes it, for reproducing a reward). Identical completions of a case
in one call are verified once. Verifications run on `cluster`: by default two or more local
worker processes kept for the life of the process; `"ray"`, `"ray://HOST:PORT"` or a `Cluster`
send them elsewhere.
"""

from __future__ import annotations

import atexit
import os
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speedproof.cluster.jobs import Cluster, run_all
from speedproof.cluster.preflight import function_needs
from speedproof.cluster.spec import open_cluster
from speedproof.corpus.errors import SplitBoundaryError
from speedproof.corpus.evaluate import case_seed
from speedproof.corpus.grading import Answer, Judged, judge_task, settle
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.functions.case import Case
from speedproof.reward_input import RewardInputError as RewardInputError
from speedproof.reward_input import column as column_values
from speedproof.reward_input import completion_text as completion_text

Completion = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
"""A completion as TRL passes it: text, or a conversation whose last message is the answer
(`reward_input` lists every accepted shape; anything else is a RewardInputError)."""
ClusterSpec = Cluster | str | None


@dataclass
class RewardCounts:
    """What this process has rewarded so far."""

    completions: int = 0
    infrastructure: int = 0
    categories: Counter[str] = field(default_factory=Counter)


_COUNTS = RewardCounts()
_CLUSTERS: dict[str, Cluster] = {}


def counts() -> RewardCounts:
    """The running counts of this process: completions, Nones (`infrastructure`), categories."""
    return _COUNTS


def _close_clusters() -> None:
    for cluster in _CLUSTERS.values():
        cluster.close()
    _CLUSTERS.clear()


atexit.register(_close_clusters)


def _cluster(spec: ClusterSpec) -> Cluster:
    """A cluster kept for the life of the process: a trainer asks for rewards thousands of
    times, and a local pool costs about a second to start."""
    if isinstance(spec, Cluster):
        return spec
    name = spec or "local"
    if name not in _CLUSTERS:
        _CLUSTERS[name] = open_cluster(
            name, workers=max(2, len(os.sched_getaffinity(0))), needs=function_needs()
        )
    return _CLUSTERS[name]


def judge_all(
    cases: Sequence[Case],
    completions: Sequence[Completion],
    *,
    cluster: ClusterSpec = None,
    seed: int | None = None,
) -> list[Judged]:
    """The verdict on each completion (`rewards` keeps only the reward)."""
    from speedproof.functions.verifier import verifier_digest

    if len(cases) != len(completions):
        raise RewardInputError(f"{len(cases)} cases but {len(completions)} completions")
    base = secrets.randbits(62) if seed is None else seed
    distinct: dict[tuple[str, str], int] = {}
    answers: list[Answer] = []
    slots: list[int] = []
    texts = [completion_text(item, index) for index, item in enumerate(completions)]
    for case, text in zip(cases, texts, strict=True):
        key = (case.id, text)
        if key not in distinct:
            distinct[key] = len(answers)
            answers.append(Answer(case, key[1], case_seed(base, case)))
        slots.append(distinct[key])
    digest = verifier_digest()
    judged: dict[int, Judged] = {}
    for finished in run_all(_cluster(cluster), judge_task, answers):
        judged[finished.job] = settle(answers[finished.job], finished, digest)
    return [judged[slot] for slot in slots]


def rewards(
    cases: Sequence[Case],
    completions: Sequence[Completion],
    *,
    cluster: ClusterSpec = None,
    seed: int | None = None,
) -> list[float | None]:
    """One reward per completion, `completions[i]` answering `cases[i]`; see the module
    docstring for what each value means."""
    verdicts = judge_all(cases, completions, cluster=cluster, seed=seed)
    for verdict in verdicts:
        _COUNTS.completions += 1
        _COUNTS.categories[verdict.category] += 1
        if verdict.reward is None:
            _COUNTS.infrastructure += 1
    return [verdict.reward for verdict in verdicts]


def reward(
    case: Case, completion: Completion, *, cluster: ClusterSpec = None, seed: int | None = None
) -> float | None:
    """The reward of one completion; see the module docstring."""
    return rewards([case], [completion], cluster=cluster, seed=seed)[0]


class TrainingReward:
    """A reward function in the shape TRL's GRPOTrainer calls (`reward_funcs=`):
    `f(prompts, completions, **kwargs) -> list[float | None]`, the case of each completion
    named by the dataset column `case_id` (see `training_prompts`).

    Only train cases are known to it: dev and frozen cases are never trained on, so a
    completion for one is refused by name. Picklable (a cluster spec, not a cluster, is kept).
    Each call reports its Nones to TRL's `log_metric` as `speedproof/infrastructure`.
    """

    __name__ = "speedproof_reward"

    def __init__(
        self,
        corpus: Path = DEFAULT_CORPUS,
        *,
        cluster: str | None = None,
        column: str = "case_id",
        cases: Sequence[Case] | None = None,
    ) -> None:
        from speedproof.corpus.splits import load_split

        train = list(cases) if cases is not None else load_split(corpus, "train")
        self.cases = {case.id: case for case in train}
        self.cluster = cluster
        self.column = column

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Completion], **kwargs: Any
    ) -> list[float | None]:
        ids = column_values(kwargs, self.column, len(completions))
        unknown = sorted({case_id for case_id in ids if case_id not in self.cases})
        if unknown:
            raise SplitBoundaryError(
                f"rewards for training come from train cases only; not train: {unknown[0]}"
            )
        before = _COUNTS.infrastructure
        values = rewards([self.cases[i] for i in ids], completions, cluster=self.cluster)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            log_metric("speedproof/infrastructure", float(_COUNTS.infrastructure - before))
        return values


def training_prompts(corpus: Path = DEFAULT_CORPUS) -> list[dict[str, Any]]:
    """The train split as TRL prompt rows: `{"prompt": [system, user], "case_id": …}`, the
    conversation exactly as `fn eval` shows a case (`corpus.prompts.build_messages`)."""
    from speedproof.corpus.prompts import build_messages
    from speedproof.corpus.splits import load_split
    from speedproof.functions.case import model_view

    return [
        {
            "prompt": [m.model_dump() for m in build_messages(model_view(case))],
            "case_id": case.id,
        }
        for case in load_split(corpus, "train")
    ]
