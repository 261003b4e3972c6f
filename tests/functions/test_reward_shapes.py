"""Every completion shape a trainer passes reaches the verifier as the same answer; anything else,
and a missing or short dataset column, is a RewardInputError that names it.

The answers here are patches that do not apply, decided before any sandbox run.
"""

from __future__ import annotations

from typing import Any

import pytest

from speedproof.functions.reward_scale import WRONG_REWARD
from speedproof.reward import (
    RewardInputError,
    TrainingReward,
    completion_text,
    judge_all,
    rewards,
)
from support.cluster import INVALID, NO_PATCH, dev_cases

SHAPES: dict[str, Any] = {
    "text": INVALID,
    "conversation": [{"role": "assistant", "content": INVALID}],
    "parts": [{"role": "assistant", "content": [{"type": "text", "text": INVALID}]}],
    "split parts": [
        {"role": "user", "content": "optimize"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": INVALID[:20]},
                {"type": "output_text", "text": INVALID[20:]},
            ],
        },
    ],
    "one message": {"role": "assistant", "content": INVALID},
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_accepted_shape_reads_as_the_same_answer(shape: str) -> None:
    assert completion_text(SHAPES[shape]) == INVALID


def test_every_accepted_shape_is_judged_as_the_text_itself() -> None:
    case = dev_cases()[0]
    judged = judge_all([case] * len(SHAPES), list(SHAPES.values()), seed=3)
    assert {verdict.category for verdict in judged} == {"invalid_patch"}
    assert {verdict.status for verdict in judged} == {"patch_error"}
    assert {verdict.reward for verdict in judged} == {WRONG_REWARD}


@pytest.mark.parametrize(
    "completion",
    [[], [{"role": "assistant", "content": None}], [{"role": "assistant", "content": []}]],
    ids=["empty-conversation", "tool-call", "no-parts"],
)
def test_an_answer_without_text_is_no_patch(completion: Any) -> None:
    assert completion_text(completion) == ""


@pytest.mark.parametrize(
    ("completion", "named"),
    [
        (["<<<<<<< SEARCH", "x"], "a list whose last item is a str"),
        ([{"role": "assistant"}], "a message without 'content' (keys: role)"),
        (
            [{"role": "assistant", "content": [{"type": "image_url", "image_url": {}}]}],
            "a content part of type 'image_url' without text",
        ),
        ([{"role": "assistant", "content": ["text"]}], "a content part of type str"),
        ([{"role": "assistant", "content": 7}], "message content of type int"),
        (b"<<<<<<< SEARCH", "a bytes"),
        (None, "a NoneType"),
    ],
    ids=[
        "list-of-str",
        "no-content",
        "image-part",
        "bare-str-part",
        "int-content",
        "bytes",
        "none",
    ],
)
def test_a_malformed_completion_is_a_named_error(completion: Any, named: str) -> None:
    with pytest.raises(RewardInputError, match="accepted: a str") as raised:
        rewards([dev_cases()[0], dev_cases()[0]], [NO_PATCH, completion])
    assert f"completion 1: {named};" in str(raised.value)


def _training() -> TrainingReward:
    return TrainingReward(cases=dev_cases()[:1])


def test_a_missing_case_id_column_is_a_named_error() -> None:
    with pytest.raises(RewardInputError, match="needs dataset column 'case_id'") as raised:
        _training()(prompts=[""], completions=[NO_PATCH], trainer_state=None)
    assert "columns passed: trainer_state" in str(raised.value)


def test_a_case_id_column_of_another_length_is_a_named_error() -> None:
    case_id = dev_cases()[0].id
    with pytest.raises(RewardInputError, match="has 1 values for 2 completions"):
        _training()(prompts=["", ""], completions=[NO_PATCH, NO_PATCH], case_id=[case_id])


def test_cases_and_completions_of_different_lengths_are_a_named_error() -> None:
    with pytest.raises(RewardInputError, match="1 cases but 2 completions"):
        rewards(dev_cases()[:1], [NO_PATCH, NO_PATCH])


def test_the_training_reward_scores_content_parts_like_text() -> None:
    case_id = dev_cases()[0].id
    values = _training()(
        prompts=["", ""],
        completions=[SHAPES["parts"], SHAPES["text"]],
        case_id=[case_id, case_id],
    )
    assert values == [WRONG_REWARD, WRONG_REWARD]
