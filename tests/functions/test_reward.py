"""The reward API through the real verifier on corpus/v2 cases: a correct faster completion earns
its log ratio, wrong ones -1.0, a correct slower one in (-0.5, 0], and a verification that cannot
be judged None (never a number), counted. One `rewards` call measures the two completions that reach
Cachegrind side by side on the default local workers (about 20 s on 2 cores); the rest is
decided before any measurement."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest

from speedproof.corpus.errors import SplitBoundaryError
from speedproof.corpus.prompts import build_messages
from speedproof.functions.case import Case, InputSpec, make_case, model_view
from speedproof.reward import (
    TrainingReward,
    completion_text,
    counts,
    reward,
    rewards,
    training_prompts,
)
from support.cluster import (
    INVALID,
    NO_PATCH,
    dev_cases,
    fast_patch,
    slower_patch,
    wrong_patch,
)

# About 25 s, most of it one module fixture that measures real rewards; the reward API is also
# compared local against Ray in make test (tests/cluster/test_cluster_ray.py).
pytestmark = pytest.mark.slow


def _outside(case: Case) -> str:
    """A patch whose result imports a module: outside the subset."""
    head = case.reference_source.splitlines()[0]
    return f"<<<<<<< SEARCH\n{head}\n=======\n{head}\n    import os\n>>>>>>> REPLACE\n"


@pytest.fixture(scope="module")
def graded() -> dict[str, float | None]:
    cases = dev_cases()
    measured = next(case for case in cases if case.family == "frequency_index")
    named: dict[str, tuple[Case, Any]] = {
        "fast": (measured, fast_patch(measured)),
        "fast again": (measured, [{"role": "assistant", "content": fast_patch(measured)}]),
        "slower": (measured, slower_patch(measured)),
        "wrong": (cases[1], wrong_patch(cases[1])),
        "invalid": (cases[2], INVALID),
        "no patch": (cases[3], NO_PATCH),
    }
    values = rewards([c for c, _ in named.values()], [t for _, t in named.values()], seed=8)
    return dict(zip(named, values, strict=True))


def test_a_correct_faster_completion_earns_a_log_ratio_above_the_one_percent_floor(
    graded: dict[str, float | None],
) -> None:
    value = graded["fast"]
    assert value is not None and value >= math.log(1.01)
    assert value > 1.0  # the known-fast source of frequency index is about 50x faster
    # The same answer as a TRL conversation shares the case's inputs in this call: same reward.
    assert graded["fast again"] == value


def test_wrong_completions_earn_the_floor_and_a_correct_slower_one_ranks_above_them(
    graded: dict[str, float | None],
) -> None:
    assert graded["wrong"] == graded["invalid"] == graded["no patch"] == -1.0
    slower = graded["slower"]
    assert slower is not None and -0.5 < slower <= 0.0


def _broken_case() -> Case:
    """A case whose reference fails on one of its own edge inputs: nothing can be judged on it."""
    spec = {"args": [{"kind": "list", "item": {"kind": "int", "lo": 0, "hi": 5}, "min_len": 1,
                      "max_len": 5}]}  # fmt: skip
    return make_case(
        id="broken",
        family="test",
        template="test",
        reference_source="def solve(xs):\n    return 10 // len(xs)\n",
        edge_inputs=[[[1, 2]], [[]]],
        benchmark_inputs=[[[3, 1, 2]]],
        input_spec=InputSpec.model_validate(spec),
    )


def test_a_completion_that_cannot_be_judged_earns_none_never_zero_and_is_counted() -> None:
    before = counts().infrastructure
    answer = "<<<<<<< SEARCH\n    return 10 // len(xs)\n=======\n    return 10 // len(xs) + 0\n>>>>>>> REPLACE\n"  # noqa: E501
    assert reward(_broken_case(), answer) is None
    assert counts().infrastructure == before + 1
    assert counts().categories["infrastructure"] >= 1


def test_a_completion_outside_the_subset_earns_the_floor() -> None:
    case = dev_cases()[4]
    assert reward(case, _outside(case)) == -1.0


def test_the_trl_adapter_reads_case_ids_and_conversations_and_logs_its_nones() -> None:
    prompts = training_prompts()
    first = prompts[0]
    case_id = first["case_id"]
    reward_function = pickle.loads(pickle.dumps(TrainingReward()))  # TRL may pickle it
    logged: list[tuple[str, float]] = []
    values = reward_function(
        prompts=[first["prompt"]] * 2,
        completions=[[{"role": "assistant", "content": NO_PATCH}], NO_PATCH],
        completion_ids=[[1], [2]],
        case_id=[case_id, case_id],
        log_metric=lambda name, value: logged.append((name, value)),
        trainer_state=None,
    )
    assert values == [-1.0, -1.0]
    assert logged == [("speedproof/infrastructure", 0.0)]
    assert reward_function.__name__ == "speedproof_reward"
    assert first["prompt"] == [
        m.model_dump() for m in build_messages(model_view(reward_function.cases[case_id]))
    ]
    assert len(prompts) == 152  # the train split, nothing else


def test_the_training_adapter_refuses_a_case_that_is_not_a_train_case() -> None:
    dev = dev_cases()[0]
    with pytest.raises(SplitBoundaryError, match=dev.id):
        TrainingReward()(prompts=[""], completions=[NO_PATCH], case_id=[dev.id])


def test_a_completion_is_its_text_or_its_last_message() -> None:
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "y"}]) == "y"
    assert completion_text([]) == ""
