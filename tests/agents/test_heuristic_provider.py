"""The heuristic provider answers every role from the context block, as a model would.

On the two bundled examples it proposes the rewrites their recorded speedup patches make (found
by general rules, not by name), the answers become patches through the campaign's own edit path,
and the examples' own test suites still pass on the patched code. No timing here: the verdicts
are measured by the real judge (see the module docstring of the provider)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from speedproof.agents.answers import (
    AnalystAnswer,
    CoordinatorAnswer,
    ExplorerAnswer,
    OptimizerAnswer,
    ReviewerAnswer,
)
from speedproof.agents.context import render_context
from speedproof.agents.edits import answer_to_patch
from speedproof.agents.heuristic.subject import NoRuleApplies
from speedproof.agents.providers.base import ChatMessage, ProviderError
from speedproof.agents.providers.heuristic import MODEL, HeuristicProvider
from speedproof.agents.roles import messages_for, read_answer
from speedproof.examples import get_example, materialise
from speedproof.judge.build.go import find_go
from speedproof.judge.worktree.apply import apply_patch
from support.example_views import python_view
from support.paths import EXAMPLES


def go_view(path: str, name: str, self_pct: float = 10.0) -> dict[str, Any]:
    """A HotFunctionView of a logstat function, read from the example's file."""
    lines = (EXAMPLES / "logstat" / path).read_text().splitlines(keepends=True)
    head = re.compile(rf"^func (\([^)]*\) )?{name}\(")
    start = next(i for i, line in enumerate(lines) if head.match(line))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip("\n") == "}")
    return {
        "name": f"main.{name}",
        "file": path,
        "start_line": start + 1,
        "end_line": end + 1,
        "self_pct": self_pct,
        "cum_pct": self_pct + 5,
        "source": "".join(lines[start : end + 1]),
    }


def optimizer_context(
    example: str, view: dict[str, Any], history: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    language = "python" if example == "textstat" else "go"
    return {
        "target": {"name": example, "language": language},
        "role": "optimizer",
        "function": view,
        "file": {"path": view["file"], "source": (EXAMPLES / example / view["file"]).read_text()},
        "history": history or [],
        "concerns": [],
        "causes": [],
    }


def ask(role: str, context: dict[str, Any]) -> Any:
    """The provider's answer through the campaign's own prompt and answer reader."""
    completion = HeuristicProvider().complete(messages_for(role, context), role=role)  # type: ignore[arg-type]
    return read_answer(role, completion.text)  # type: ignore[arg-type]


def attempt(function: str, rule: str, verdict: str = "rejected") -> dict[str, Any]:
    return {
        "candidate_id": 1,
        "function": function,
        "hypothesis": "earlier",
        "rule": rule,
        "verdict": verdict,
        "reasons": [],
        "diff_sha256": "0" * 64,
    }


TEXTSTAT_HOT = [
    python_view("textstat/analysis.py", "textstat.analysis.TextStats.add", 30.0),
    python_view("textstat/words.py", "textstat.words.is_stopword", 25.0),
    python_view("textstat/words.py", "textstat.words.words", 8.0),
    python_view("textstat/report.py", "textstat.report.histogram", 1.0),
]


# -- the provider itself -----------------------------------------------------------------------


def test_the_provider_answers_free_and_the_same_every_time() -> None:
    context = optimizer_context("textstat", TEXTSTAT_HOT[1])
    messages = messages_for("optimizer", context)
    first = HeuristicProvider().complete(messages, role="optimizer")
    again = HeuristicProvider().complete(messages, role="optimizer")
    assert first.text == again.text
    assert (first.model, first.provider) == (MODEL, "heuristic") and MODEL == "heuristic-2"
    assert (first.input_tokens, first.output_tokens, first.cost_usd) == (0, 0, 0.0)


def test_a_repair_turn_is_answered_from_the_earlier_context() -> None:
    context = optimizer_context("textstat", TEXTSTAT_HOT[1])
    messages = [
        *messages_for("optimizer", context),
        ChatMessage(role="assistant", content="not json"),
        ChatMessage(role="user", content="Your answer was not JSON; answer again."),
    ]
    completion = HeuristicProvider().complete(messages, role="optimizer")
    assert OptimizerAnswer.model_validate_json(completion.text).rule == "py-frozenset-constant"


@pytest.mark.parametrize(
    ("messages", "role", "words"),
    [
        ([ChatMessage(role="user", content="no context here")], "optimizer", "needs a user"),
        ([ChatMessage(role="user", content="<context>\n[1]\n</context>")], "analyst", "not a JSON"),
        (
            [ChatMessage(role="user", content=render_context({"role": "analyst"}))],
            "reviewer",
            "context for role 'analyst'",
        ),
        ([ChatMessage(role="user", content=render_context({}))], "judge", "no role 'judge'"),
        (
            [ChatMessage(role="user", content=render_context({"role": "analyst"}))],
            "analyst",
            "'target'",
        ),
    ],
    ids=["no-context", "not-an-object", "another-role", "unknown-role", "missing-key"],
)
def test_a_context_the_provider_cannot_use_is_a_named_provider_error(
    messages: list[ChatMessage], role: str, words: str
) -> None:
    with pytest.raises(ProviderError, match=re.escape(words)):
        HeuristicProvider().complete(messages, role=role)


# -- optimizer on the bundled examples ---------------------------------------------------------


def test_on_textstat_the_stop_list_becomes_a_frozenset_and_the_word_pattern_is_hoisted() -> None:
    stop = ask("optimizer", optimizer_context("textstat", TEXTSTAT_HOT[1]))
    assert isinstance(stop, OptimizerAnswer) and stop.rule == "py-frozenset-constant"
    assert stop.kind == "search_replace" and "STOPWORDS = frozenset({" in stop.blocks[0].replace
    assert "358-element" in stop.hypothesis
    pattern = ask("optimizer", optimizer_context("textstat", TEXTSTAT_HOT[2]))
    assert isinstance(pattern, OptimizerAnswer) and pattern.rule == "py-hoist-regex"
    assert pattern.preamble == "_WORD_PATTERN_RE = re.compile(WORD_PATTERN)\n"


def test_on_logstat_the_id_pattern_is_hoisted_and_the_slow_list_uses_a_builder() -> None:
    hoist = ask("optimizer", optimizer_context("logstat", go_view("parse.go", "normalizeEndpoint")))
    assert isinstance(hoist, OptimizerAnswer) and hoist.rule == "go-hoist-regexp"
    assert hoist.preamble == "var idSegment = regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)\n"
    builder = ask("optimizer", optimizer_context("logstat", go_view("report.go", "writeSlow")))
    assert isinstance(builder, OptimizerAnswer) and builder.rule == "go-strings-builder"
    assert "fmt.Fprintf(&outBuilder," in (builder.source or "")


def _patched(example: str, views: list[dict[str, Any]], tmp_path: Path) -> Path:
    """A fresh repository of `example` with the optimizer's answer for each view applied."""
    root = materialise(get_example(example), tmp_path)
    language = "python" if example == "textstat" else "go"
    for view in views:
        answer = ask("optimizer", optimizer_context(example, view))
        result = answer_to_patch(answer, worktree=root, target_rel=Path("."), language=language)
        apply_patch(root, result.patch)
    return root


# 21 s, textstat's whole suite; logstat's proposals are checked the same way in `make test`.
@pytest.mark.slow
def test_textstat_tests_pass_with_every_textstat_proposal_applied(tmp_path: Path) -> None:
    views = [TEXTSTAT_HOT[1], TEXTSTAT_HOT[2], TEXTSTAT_HOT[3]]
    root = _patched("textstat", views, tmp_path)
    words = (root / "textstat/words.py").read_text()
    assert "frozenset({" in words and "_WORD_PATTERN_RE = re.compile(WORD_PATTERN)" in words
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_logstat_tests_pass_with_every_logstat_proposal_applied(tmp_path: Path) -> None:
    views = [
        go_view("parse.go", "normalizeEndpoint"),
        go_view("report.go", "writeSlow"),
        go_view("report.go", "writeHours"),
    ]
    root = _patched("logstat", views, tmp_path)
    assert "var idSegment = regexp.MustCompile" in (root / "parse.go").read_text()
    env = {**os.environ, "GOFLAGS": "-buildvcs=false", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        [str(find_go()), "test", "./..."],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_optimizer_never_repeats_a_rule_already_tried_on_the_function() -> None:
    view = python_view("textstat/report.py", "textstat.report.histogram")
    first = ask("optimizer", optimizer_context("textstat", view))
    assert first.rule == "py-repeat-concat"
    history = [attempt("report.histogram", "py-repeat-concat")]
    second = ask("optimizer", optimizer_context("textstat", view, history))
    assert second.rule == "py-join-parts"
    history.append(attempt("textstat.report.histogram", "py-join-parts"))
    with pytest.raises(NoRuleApplies, match="histogram") as raised:
        ask("optimizer", optimizer_context("textstat", view, history))
    assert raised.value.function == "textstat.report.histogram"
    assert raised.value.rules == ("py-repeat-concat", "py-join-parts")


def test_the_optimizer_tries_the_rules_for_the_claimed_cause_first() -> None:
    view = python_view("textstat/report.py", "textstat.report.histogram")
    context = optimizer_context("textstat", view)
    context["causes"] = [
        {
            "function": "textstat.report.histogram",
            "cause": "string_building",
            "probability": 0.8,
            "source": "advisor",
            "evidence": "a string grows in a loop",
        }
    ]
    assert ask("optimizer", context).rule == "py-join-parts"


# -- the other roles ---------------------------------------------------------------------------


def coordinator_context(
    hot: list[dict[str, Any]], history: list[dict[str, Any]], language: str = "python"
) -> dict[str, Any]:
    return {
        "target": {"name": "t", "language": language},
        "role": "coordinator",
        "hot_functions": hot,
        "history": history,
        "flags": [],
    }


def test_the_coordinator_picks_the_hottest_function_a_rule_still_applies_to() -> None:
    first = ask("coordinator", coordinator_context(TEXTSTAT_HOT, []))
    # TextStats.add is hotter, but no rule applies to it.
    assert isinstance(first, CoordinatorAnswer) and first.function == "textstat.words.is_stopword"
    assert "py-frozenset-constant" in first.rationale and "25.0 % self" in first.rationale
    tried = [attempt("textstat.words.is_stopword", "py-frozenset-constant", "accepted")]
    second = ask("coordinator", coordinator_context(TEXTSTAT_HOT, tried))
    assert second.function == "textstat.words.words"


def test_a_function_whose_proposal_is_being_made_is_left_to_it_by_the_coordinator() -> None:
    # A cluster wave chose is_stopword a moment ago; its proposal shows no rule yet.
    being_made = {"function": "textstat.words.is_stopword", "rule": None, "verdict": "being judged"}
    answer = ask("coordinator", coordinator_context(TEXTSTAT_HOT, [being_made]))
    assert answer.function == "textstat.words.words"


def test_the_coordinator_answers_an_empty_function_when_nothing_is_left() -> None:
    history = [
        attempt("textstat.words.is_stopword", "py-frozenset-constant"),
        attempt("textstat.words.words", "py-hoist-regex"),
        attempt("textstat.report.histogram", "py-repeat-concat"),
        attempt("textstat.report.histogram", "py-join-parts"),
    ]
    context = coordinator_context(TEXTSTAT_HOT, history)
    completion = HeuristicProvider().complete(
        messages_for("coordinator", context), role="coordinator"
    )
    assert json.loads(completion.text) == {
        "function": "",
        "rationale": "no rule applies to any hot function",
    }
    command = coordinator_context(TEXTSTAT_HOT, [], language="command")
    answer = HeuristicProvider().complete(messages_for("coordinator", command), role="coordinator")
    assert json.loads(answer.text)["function"] == ""


def test_the_analyst_reports_each_structural_match_as_a_cause() -> None:
    hot = [*TEXTSTAT_HOT, go_view("parse.go", "normalizeEndpoint")]
    context = {"target": {"name": "textstat", "language": "python"}, "role": "analyst"}
    answer = ask("analyst", {**context, "hot_functions": hot[:4]})
    assert isinstance(answer, AnalystAnswer)
    claims = {(c.function, c.cause, c.confidence) for c in answer.causes}
    assert claims == {
        # Without the file, STOPWORDS and WORD_PATTERN may not be module constants.
        ("textstat.words.is_stopword", "superlinear", 0.5),
        ("textstat.words.words", "repeated_work", 0.5),
        ("textstat.report.histogram", "repeated_work", 1.0),
        ("textstat.report.histogram", "string_building", 1.0),
    }
    go = {"target": {"name": "logstat", "language": "go"}, "role": "analyst"}
    go_answer = ask("analyst", {**go, "hot_functions": hot[4:]})
    assert [(c.cause, c.confidence) for c in go_answer.causes] == [("repeated_work", 1.0)]


def test_the_explorer_proposes_no_workloads() -> None:
    context = {
        "target": {"name": "textstat", "language": "python"},
        "role": "explorer",
        "workloads": [{"id": "novel", "args": ["data/novel.txt"], "tier": "representative"}],
        "hot_functions": TEXTSTAT_HOT,
    }
    assert ask("explorer", context) == ExplorerAnswer(workloads=[])


REVIEWS = [
    ("textstat", "behaviour-longest-line-max", "reconsider", "max returns the first"),
    ("logstat", "behaviour-slow-tiebreak", "reconsider", "comparison inside a sort"),
    ("logstat", "behaviour-utc-hours", "reconsider", "time zone"),
    ("textstat", "speedup-stopword-set", "proceed", "set or map"),
    ("textstat", "speedup-lines-containing-one-pass", "proceed", "set or map"),
    ("logstat", "speedup-hoist-regexp", "proceed", None),
    ("logstat", "speedup-slow-report-builder", "proceed", None),
]


@pytest.mark.parametrize(("example", "patch", "recommendation", "words"), REVIEWS)
def test_the_reviewer_flags_the_bundled_behaviour_changes_and_passes_the_speedups(
    example: str, patch: str, recommendation: str, words: str | None
) -> None:
    diff = (EXAMPLES / example / "patches" / f"{patch}.patch").read_text()
    view = python_view("textstat/words.py", "textstat.words.words")
    context = {
        "target": {"name": example, "language": "python"},
        "role": "reviewer",
        "diff": diff,
        "function": view,
        "hypothesis": "faster",
    }
    answer = ask("reviewer", context)
    assert isinstance(answer, ReviewerAnswer) and answer.recommendation == recommendation
    texts = " ".join(c.text for c in answer.concerns)
    if words is None:
        assert answer.concerns == []
    else:
        assert words in texts
