from __future__ import annotations

import pytest

from speedproof.corpus.generate import build_pairs
from speedproof.corpus.prompts import (
    FEEDBACK,
    SYSTEM_PROMPT,
    build_messages,
    canonical_patch,
    retry_messages,
)
from speedproof.functions.case import model_view
from support.corpus import SMALL


def _apply(source: str, patch: str) -> str:
    """The one-block application rule, spelled out: the SEARCH text occurs exactly once."""
    body = patch.removeprefix("<<<<<<< SEARCH\n").removesuffix(">>>>>>> REPLACE\n")
    search, replace = body.split("=======\n")
    assert source.count(search) == 1
    return source.replace(search, replace)


@pytest.mark.parametrize("index", range(0, 35, 2))
def test_the_canonical_patch_turns_the_reference_into_the_fast_source(index: int) -> None:
    pair = build_pairs(SMALL)[index]
    patch = canonical_patch(pair.case.reference_source, pair.fast_source)
    assert _apply(pair.case.reference_source, patch) == pair.fast_source


def test_the_canonical_patch_leaves_the_signature_and_the_prelude_outside_the_block() -> None:
    pair = build_pairs(SMALL)[0]
    patch = canonical_patch(pair.case.reference_source, pair.fast_source)
    first_lines = pair.case.reference_source.splitlines()[:2]  # def line, the prelude's constant
    assert all(line not in patch for line in first_lines)


def test_a_pure_insertion_still_searches_for_an_anchor_line() -> None:
    reference = "def solve(xs):\n    return xs\n"
    candidate = "def solve(xs):\n    xs = list(xs)\n    return xs\n"
    patch = canonical_patch(reference, candidate)
    assert _apply(reference, patch) == candidate


def test_the_context_holds_only_the_model_view() -> None:
    pair = build_pairs(SMALL)[0]
    messages = build_messages(model_view(pair.case))
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].content == SYSTEM_PROMPT
    text = messages[1].content
    assert pair.case.reference_source.rstrip() in text
    assert pair.fast_source.rstrip() not in text
    for args in pair.case.edge_inputs + pair.case.benchmark_inputs:
        assert str(args) not in text


def test_retry_feedback_names_the_category_and_nothing_else() -> None:
    pair = build_pairs(SMALL)[0]
    history = build_messages(model_view(pair.case))
    retried = retry_messages(history, "my answer", "semantic_failure")
    assert retried[:2] == history
    assert retried[2].role == "assistant" and retried[2].content == "my answer"
    assert retried[3].content.startswith(FEEDBACK["semantic_failure"])
    assert "[" not in retried[3].content  # no input or output is quoted
