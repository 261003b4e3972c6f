"""What a model is shown and what it is asked to answer, built only from `model_view`.

The conversation is [system, user]: the system prompt states the rules and the answer format,
the user message holds the function's reference source. The family and template ids are not
shown: a real user's function comes with no such label. A retry appends the model's previous
answer and a feedback message naming only the failure category, never an input or an output.
"""

from __future__ import annotations

from speedproof.agents.providers.base import ChatMessage
from speedproof.functions.case import ModelView

SYSTEM_PROMPT = """\
You make Python functions faster without changing what they return.

Rules the verifier enforces:
- The function must return exactly the same value (same types) as the original for every input.
- Keep it one top-level function with the same name and parameters. No imports, decorators,
  default arguments, nested functions, lambdas, classes, or names starting with an underscore.
- Keep every local fact the original relies on (constants, normalisations, filters).
- Success means fewer executed instructions on large inputs, measured, not guessed.

Answer with one or more SEARCH/REPLACE blocks and nothing else:
<<<<<<< SEARCH
lines copied exactly from the function
=======
the lines that replace them
>>>>>>> REPLACE
"""

FEEDBACK: dict[str, str] = {
    "formatting": "Your answer held no SEARCH/REPLACE block that could be read.",
    "invalid_patch": (
        "Your patch could not be applied, or the result is outside the allowed Python subset."
    ),
    "missed_optimization": "Your patch kept the same algorithm; it was not faster.",
    "semantic_failure": (
        "The patched function returned a different result, raised an error, or ran out of "
        "time or memory on a hidden input."
    ),
    "correct_not_faster": "The patched function was correct but not faster than the original.",
}


def user_message(view: ModelView) -> str:
    text = (
        f"Make `{view.function_name}` faster. Its behaviour on every input must stay the same.\n\n"
        f"```python\n{view.reference_source.rstrip()}\n```\n"
    )
    if view.contract is None:
        return text
    # The contract is the domain the checker draws over, boundaries included: a rewrite must
    # agree with the original on all of it, not only on inputs that look like a benchmark.
    heading = "Every input the function must handle (all of it is checked):"
    return f"{text}\n{heading}\n{view.contract}\n"


def build_messages(view: ModelView) -> list[ChatMessage]:
    """The exact one-shot context a model sees for a case."""
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=user_message(view)),
    ]


def retry_messages(history: list[ChatMessage], answer: str, category: str) -> list[ChatMessage]:
    """The conversation after a failed attempt: the answer, then the category's feedback."""
    feedback = FEEDBACK.get(category, "Your previous answer was rejected.")
    return [
        *history,
        ChatMessage(role="assistant", content=answer),
        ChatMessage(role="user", content=f"{feedback} Answer again with SEARCH/REPLACE blocks."),
    ]


def canonical_patch(reference: str, candidate: str) -> str:
    """One SEARCH/REPLACE block turning `reference` into `candidate`.

    Unchanged leading and trailing lines stay outside the block, so the block shows what changed
    and the lines it keeps (the `def` line, the prelude's constants) are visibly kept. The SEARCH
    side always has at least one line, widened until it occurs once in the reference.
    """
    old = reference.rstrip("\n").split("\n")
    new = candidate.rstrip("\n").split("\n")
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    lo, hi = start, len(old) - end
    while hi == lo or _occurrences(old, old[lo:hi]) != 1:
        if lo > 0:
            lo -= 1
        elif hi < len(old):
            hi += 1
        else:
            break
    search = old[lo:hi]
    replace = new[lo : len(new) - (len(old) - hi)]
    return (
        "<<<<<<< SEARCH\n"
        + "".join(f"{line}\n" for line in search)
        + "=======\n"
        + "".join(f"{line}\n" for line in replace)
        + ">>>>>>> REPLACE\n"
    )


def _occurrences(lines: list[str], block: list[str]) -> int:
    width = len(block)
    return sum(1 for i in range(len(lines) - width + 1) if lines[i : i + width] == block)
