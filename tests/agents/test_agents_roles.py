"""One role turn against the replay provider: prompts, answer reading, the single repair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from speedproof.agents.answers import CoordinatorAnswer, OptimizerAnswer
from speedproof.agents.context import ContextError, extract_context
from speedproof.agents.prompts import ROLES, RoleName, repair_prompt
from speedproof.agents.providers.base import ChatMessage
from speedproof.agents.providers.replay import ReplayMissing, ReplayProvider, recorded_line
from speedproof.agents.roles import ask, messages_for
from support.paths import ROOT

EXAMPLES = ROOT / "examples"

HOT = {
    "name": "textstat.words.is_stopword",
    "file": "textstat/words.py",
    "start_line": 59,
    "end_line": 60,
    "self_pct": 31.4,
    "cum_pct": 40.0,
    "source": "def is_stopword(word: str) -> bool:\n    return word in STOPWORDS\n",
}
ATTEMPT = {
    "candidate_id": "c0001",
    "function": "textstat.words.words",
    "hypothesis": "compile the pattern once",
    "rule": None,
    "verdict": "rejected",
    "reasons": ["no supported improvement on novel"],
    "diff_sha256": "0" * 64,
}
CAUSE = {
    "function": "textstat.words.is_stopword",
    "cause": "superlinear",
    "probability": 0.7,
    "source": "static",
    "evidence": "membership test on a list",
}
GOOD_COORDINATOR = json.dumps({"function": HOT["name"], "rationale": "highest self time"})


def context_for(role: RoleName) -> dict[str, Any]:
    common = {"target": {"name": "textstat", "language": "python"}, "role": role}
    words = (EXAMPLES / "textstat/textstat/words.py").read_text()
    per_role: dict[str, dict[str, Any]] = {
        "coordinator": {"hot_functions": [HOT], "history": [ATTEMPT], "flags": [CAUSE]},
        "explorer": {
            "workloads": [
                {"id": "novel", "args": ["--top", "30", "data/novel.txt"], "tier": "representative"}
            ],
            "hot_functions": [HOT],
        },
        "analyst": {"hot_functions": [HOT]},
        "optimizer": {
            "function": HOT,
            "file": {"path": "textstat/words.py", "source": words},
            "history": [ATTEMPT],
            "concerns": ["the set must keep the contractions"],
            "causes": [CAUSE],
        },
        "reviewer": {
            "diff": "--- a/textstat/words.py\n+++ b/textstat/words.py\n",
            "function": HOT,
            "hypothesis": "a set lookup is constant time",
        },
    }
    return {**common, **per_role[role]}


def recording(tmp_path: Path, *lines: str) -> ReplayProvider:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return ReplayProvider(path)


@pytest.mark.parametrize("role", ROLES)
def test_every_role_gets_a_system_and_a_user_message_ending_with_its_context(
    role: RoleName,
) -> None:
    context = context_for(role)
    system, user = messages_for(role, context)
    assert (system.role, user.role) == ("system", "user")
    assert f"You are the {role}" in system.content
    assert user.content.endswith("</context>")
    assert extract_context(user.content) == context


def test_the_optimizer_prompt_shows_the_function_attempts_concerns_and_rules() -> None:
    system, user = messages_for("optimizer", context_for("optimizer"))
    assert "ONE small, behaviour-preserving change" in system.content
    assert "byte-identical" in system.content and "protected" in system.content
    assert "```python\ndef is_stopword(word: str) -> bool:" in user.content
    assert "c0001 on textstat.words.words: compile the pattern once -> rejected" in user.content
    assert "- the set must keep the contractions" in user.content
    assert "superlinear (static, p=0.70)" in user.content


def test_a_context_for_another_role_or_missing_a_key_is_refused() -> None:
    with pytest.raises(ContextError, match="given to the reviewer"):
        messages_for("reviewer", {**context_for("reviewer"), "role": "optimizer"})
    incomplete = context_for("optimizer")
    del incomplete["concerns"]
    with pytest.raises(ContextError, match="lacks concerns"):
        messages_for("optimizer", incomplete)


def test_a_holdout_workload_never_reaches_a_prompt() -> None:
    context = context_for("explorer")
    context["workloads"].append({"id": "tickets", "args": ["t.csv"], "tier": "holdout"})
    with pytest.raises(ContextError, match="holdout"):
        messages_for("explorer", context)


def test_a_good_answer_takes_one_call(tmp_path: Path) -> None:
    provider = recording(tmp_path, recorded_line("coordinator", GOOD_COORDINATOR))
    result = ask("coordinator", provider, context_for("coordinator"))
    assert result.attempts == 1 and result.rejection is None
    assert isinstance(result.answer, CoordinatorAnswer)
    assert result.answer.function == HOT["name"]
    assert len(result.completions) == 1


def test_fenced_json_with_prose_around_it_is_read(tmp_path: Path) -> None:
    text = (
        "The list scan is the cost. Here is my answer:\n\n```json\n"
        + json.dumps({"hypothesis": "set lookup", "kind": "diff", "diff": "--- a/x\n+++ b/x\n"})
        + "\n```\n\nLet me know if {anything} else is needed."
    )
    provider = recording(tmp_path, recorded_line("optimizer", text))
    result = ask("optimizer", provider, context_for("optimizer"))
    assert isinstance(result.answer, OptimizerAnswer)
    assert result.answer.kind == "diff"


def test_bare_json_in_prose_without_a_fence_is_read(tmp_path: Path) -> None:
    provider = recording(tmp_path, recorded_line("coordinator", f"Sure. {GOOD_COORDINATOR} Done."))
    assert ask("coordinator", provider, context_for("coordinator")).answer is not None


def test_bad_json_gets_one_repair_turn_that_quotes_the_error(tmp_path: Path) -> None:
    context = context_for("coordinator")
    broken = '{"function": "textstat.words.is_stopword", "rationale": "x",}'
    reason = "answer-not-json: Expecting property name enclosed in double quotes"
    # The second answer is keyed to the exact repair conversation, so it is only found when
    # the retry carries the first answer and a repair prompt quoting the decoder's error.
    retry = [
        *messages_for("coordinator", context),
        ChatMessage(role="assistant", content=broken),
        ChatMessage(role="user", content=repair_prompt(f"{reason}: line 1 column 61 (char 60)")),
    ]
    provider = recording(
        tmp_path,
        recorded_line("coordinator", broken),
        recorded_line("coordinator", GOOD_COORDINATOR, messages=retry),
    )
    result = ask("coordinator", provider, context)
    assert result.attempts == 2
    assert isinstance(result.answer, CoordinatorAnswer)
    assert [c.text for c in result.completions] == [broken, GOOD_COORDINATOR]


def test_bad_json_twice_is_a_named_rejection_keeping_both_completions(tmp_path: Path) -> None:
    provider = recording(
        tmp_path,
        recorded_line("optimizer", "I would use a set."),
        recorded_line("optimizer", "Sorry: use a frozenset."),
    )
    result = ask("optimizer", provider, context_for("optimizer"))
    assert result.answer is None
    assert result.rejection == "answer-not-json: no JSON object found in the answer"
    assert result.attempts == 2
    assert [c.text for c in result.completions] == [
        "I would use a set.",
        "Sorry: use a frozenset.",
    ]


def test_a_schema_violation_is_a_rejection_naming_the_field(tmp_path: Path) -> None:
    missing_source = json.dumps({"hypothesis": "h", "kind": "function", "function": "f"})
    provider = recording(tmp_path, recorded_line("optimizer", missing_source))
    result = ask("optimizer", provider, context_for("optimizer"), repair=False)
    assert result.attempts == 1
    assert result.rejection == "answer-invalid: field 'source' is required for kind 'function'"


def test_a_field_error_is_named_by_its_path(tmp_path: Path) -> None:
    bad = json.dumps({"workloads": [{"id": "a b", "args": [], "rationale": "r"}]})
    provider = recording(tmp_path, recorded_line("explorer", bad), recorded_line("explorer", bad))
    result = ask("explorer", provider, context_for("explorer"))
    assert result.rejection is not None
    assert result.rejection.startswith("answer-invalid: field workloads.0.id: String should match")
    assert result.attempts == 2


def test_two_json_objects_are_a_named_rejection(tmp_path: Path) -> None:
    two = f"```json\n{GOOD_COORDINATOR}\n```\nor\n```json\n{GOOD_COORDINATOR}\n```"
    provider = recording(tmp_path, recorded_line("coordinator", two))
    result = ask("coordinator", provider, context_for("coordinator"), repair=False)
    assert result.rejection is not None
    assert result.rejection.startswith("answer-several-json: the answer holds 2 JSON objects")


def test_a_json_array_is_not_an_answer(tmp_path: Path) -> None:
    provider = recording(tmp_path, recorded_line("analyst", "[]"))
    result = ask("analyst", provider, context_for("analyst"), repair=False)
    assert result.rejection == "answer-not-json: the answer is a JSON list, not an object"


def test_a_provider_error_propagates_instead_of_becoming_a_rejection(tmp_path: Path) -> None:
    provider = recording(tmp_path, recorded_line("reviewer", "not json"))
    with pytest.raises(ReplayMissing):
        ask("reviewer", provider, context_for("reviewer"))
