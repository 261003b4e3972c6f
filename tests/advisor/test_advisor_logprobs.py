"""Reading P(yes) from the first answer token's log-probabilities."""

from __future__ import annotations

import math

import pytest

from speedproof.advisor.errors import NoYesNoAnswer
from speedproof.advisor.logprobs import yes_probability
from speedproof.agents.providers.base import TokenLogprobs


def token(chosen: str, top: dict[str, float]) -> list[TokenLogprobs]:
    return [TokenLogprobs(token=chosen, logprob=top.get(chosen, -1.0), top=top)]


def test_the_probability_is_yes_over_yes_and_no() -> None:
    found = yes_probability(token("Yes", {"Yes": math.log(0.6), "No": math.log(0.3)}))
    assert found == pytest.approx(0.6 / 0.9)


def test_spellings_of_yes_and_no_are_summed() -> None:
    top = {
        "Yes": math.log(0.4),
        " yes": math.log(0.1),
        "YES.": math.log(0.1),
        "No": math.log(0.2),
        " no": math.log(0.2),
    }
    assert yes_probability(token("Yes", top)) == pytest.approx(0.6 / 1.0)


def test_the_written_token_does_not_decide_the_answer() -> None:
    # The model wrote "No" but gave "Yes" 0.7 of its probability.
    top = {"No": math.log(0.3), "Yes": math.log(0.7)}
    assert yes_probability(token("No", top)) == pytest.approx(0.7)


def test_a_missing_no_is_bounded_by_the_least_likely_alternative() -> None:
    top = {"Yes": math.log(0.9), "Sure": math.log(0.05), "Maybe": math.log(0.001)}
    found = yes_probability(token("Yes", top))
    assert found == pytest.approx(0.9 / (0.9 + 0.001))
    assert found < 1.0


def test_an_answer_without_yes_or_no_is_a_named_error() -> None:
    with pytest.raises(NoYesNoAnswer, match="neither yes nor no"):
        yes_probability(token("The", {"The": -0.1, "This": -2.0}))


def test_an_empty_answer_is_a_named_error() -> None:
    with pytest.raises(NoYesNoAnswer):
        yes_probability([])
