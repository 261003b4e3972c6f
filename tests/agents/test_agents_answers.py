"""The role answer schemas and the context block every role's user message ends with."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from speedproof.agents.answers import (
    AnalystAnswer,
    ExplorerAnswer,
    OptimizerAnswer,
    ReviewerAnswer,
)
from speedproof.agents.context import ContextError, extract_context, render_context
from speedproof.agents.prompts import EXAMPLES, ROLES
from speedproof.agents.roles import SCHEMAS


@pytest.mark.parametrize("role", ROLES)
def test_the_example_answer_in_every_system_prompt_is_valid_for_its_schema(role: Any) -> None:
    SCHEMAS[role].model_validate(EXAMPLES[role])


def optimizer(**fields: object) -> OptimizerAnswer:
    return OptimizerAnswer.model_validate({"hypothesis": "faster", **fields})


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"kind": "function", "function": "f"}, "'source'"),
        ({"kind": "function", "source": "def f(): pass"}, "'function'"),
        ({"kind": "search_replace"}, "'blocks'"),
        ({"kind": "diff"}, "'diff'"),
    ],
)
def test_a_missing_field_for_its_kind_is_named(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError, match=f"field {named} is required for kind"):
        optimizer(**fields)


def test_a_field_of_another_kind_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="field 'source' does not belong to kind 'diff'"):
        optimizer(kind="diff", diff="--- a/x\n+++ b/x\n", source="def f(): pass")
    with pytest.raises(ValidationError, match="field 'imports' does not belong"):
        optimizer(
            kind="search_replace",
            blocks=[{"file": "a", "search": "b", "replace": "c"}],
            imports=["import re"],
        )


def test_each_kind_validates_with_exactly_its_fields() -> None:
    assert optimizer(kind="function", function="f", source="def f(): pass").file is None
    assert optimizer(kind="diff", diff="x").blocks == []
    answer = optimizer(kind="search_replace", blocks=[{"file": "a", "search": "b", "replace": ""}])
    assert answer.blocks[0].replace == ""


def test_unknown_keys_and_empty_hypotheses_are_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        optimizer(kind="diff", diff="x", confidence=0.9)
    with pytest.raises(ValidationError, match="hypothesis"):
        OptimizerAnswer.model_validate({"hypothesis": "", "kind": "diff", "diff": "x"})


def test_an_empty_search_text_is_refused() -> None:
    with pytest.raises(ValidationError, match="search"):
        optimizer(kind="search_replace", blocks=[{"file": "a", "search": "", "replace": "c"}])


def test_the_explorer_proposes_at_most_five_workloads_with_plain_ids() -> None:
    workload = {"id": "w", "args": [], "rationale": "r"}
    ExplorerAnswer.model_validate({"workloads": [workload] * 5})
    with pytest.raises(ValidationError, match="at most 5"):
        ExplorerAnswer.model_validate({"workloads": [workload] * 6})
    with pytest.raises(ValidationError, match="pattern"):
        ExplorerAnswer.model_validate({"workloads": [{**workload, "id": "../x y"}]})


def test_a_cause_outside_the_list_or_a_confidence_above_one_is_refused() -> None:
    claim = {"function": "f", "cause": "allocation", "evidence": "e", "confidence": 0.5}
    AnalystAnswer.model_validate({"causes": [claim]})
    with pytest.raises(ValidationError, match="cause"):
        AnalystAnswer.model_validate({"causes": [{**claim, "cause": "cache_misses"}]})
    with pytest.raises(ValidationError, match="confidence"):
        AnalystAnswer.model_validate({"causes": [{**claim, "confidence": 1.5}]})


def test_a_reviewer_recommendation_is_proceed_or_reconsider() -> None:
    with pytest.raises(ValidationError, match="recommendation"):
        ReviewerAnswer.model_validate({"concerns": [], "recommendation": "maybe"})


def test_the_context_block_round_trips_even_when_source_holds_the_tags() -> None:
    context = {
        "role": "optimizer",
        "file": {"source": 'TEMPLATE = "<context>{x}</context>"\n', "path": "t.py"},
        "text": "naïve ✓",
    }
    block = render_context(context)
    assert block.startswith("<context>\n") and block.endswith("\n</context>")
    assert block.count("<context>") == 1 and block.count("</context>") == 1
    message = "Read the <context> block below.\n\n" + block
    assert extract_context(message) == context


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no block here", "no <context> block"),
        ("<context>\n{}\n", "not closed"),
        ("<context>\n{not json}\n</context>", "not JSON"),
        ("<context>\n[1, 2]\n</context>", "not a JSON object"),
    ],
)
def test_a_missing_or_malformed_context_block_is_a_context_error(text: str, reason: str) -> None:
    with pytest.raises(ContextError, match=reason):
        extract_context(text)


def test_a_context_that_is_not_json_is_a_context_error() -> None:
    with pytest.raises(ContextError, match="cannot be written as JSON"):
        render_context({"nan": float("nan")})
