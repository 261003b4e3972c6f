"""A yes/no probability from the first answer token's log-probabilities.

The answer text is never read: a model that writes "No" while giving "Yes" 0.7 of its
probability mass answered 0.7. The first token's alternatives (`top`, the chosen token
included) are grouped into yes-forms and no-forms ("Yes", " yes", "YES", "yes." ...), each
group's probability is summed, and P(yes) = yes / (yes + no): the probability of "yes" given
that the model answers the question at all.

When only one of the two is among the alternatives, the other's probability is bounded: it is
at most the least likely listed alternative and at most the mass the listed ones leave over, and
that bound is used. With 20 alternatives this is well under 1e-3 for a confident model. When
neither is listed, the model did not answer the question: `NoYesNoAnswer`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from speedproof.advisor.errors import NoYesNoAnswer
from speedproof.agents.providers.base import TokenLogprobs

YES = "yes"
NO = "no"
_STRIP = " \t\r\n.,:;!\"'`*_"


def _word(token: str) -> str:
    return token.strip(_STRIP).lower()


def yes_probability(tokens: Sequence[TokenLogprobs]) -> float:
    """P(yes) in [0, 1] read from the first token of an answer (see the module docstring)."""
    if not tokens:
        raise NoYesNoAnswer("the answer has no tokens to read a probability from")
    first = tokens[0]
    listed = dict(first.top)
    listed.setdefault(first.token, first.logprob)
    probabilities = {token: math.exp(lp) for token, lp in listed.items()}
    yes = sum(p for token, p in probabilities.items() if _word(token) == YES)
    no = sum(p for token, p in probabilities.items() if _word(token) == NO)
    if yes == 0 and no == 0:
        shown = ", ".join(repr(t) for t in sorted(listed, key=lambda t: -listed[t])[:5])
        raise NoYesNoAnswer(
            f"neither yes nor no is among the first token's alternatives (most likely: {shown})"
        )
    unlisted = min(min(probabilities.values()), max(0.0, 1.0 - sum(probabilities.values())))
    yes = yes or unlisted
    no = no or unlisted
    return yes / (yes + no)
