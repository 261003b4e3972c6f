"""The advisor over a real OpenAI-compatible HTTP server: probabilities from logprobs, the
pinned build, endpoints that cannot give probabilities, and the answer cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.advisor.cache import AnswerCache, CachedAnswerer
from speedproof.advisor.client import EndpointAdvisor
from speedproof.advisor.errors import (
    AdvisorConfigError,
    LogprobsRefused,
    NoYesNoAnswer,
    PinnedBuildMismatch,
)
from speedproof.advisor.questions import question
from speedproof.advisor.subject import Subject
from support.advisor import logprob_reply
from support.model_server import ModelServer, Reply

SUBJECT = Subject.of(
    "go",
    "main.printAll",
    "func printAll(xs []string) {\n\tfor _, x := range xs {\n\t\tfmt.Println(x)\n\t}\n}\n",
)
OTHER = Subject.of("python", "m.f", "def f(xs):\n    return sorted(xs)[0]\n")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=["classifier-2025-06-01", "classifier-2025-07-01"]) as running:
        yield running


def advisor(server: ModelServer, model: str = "classifier-2025-06-01") -> EndpointAdvisor:
    return EndpointAdvisor(f"openai:{model}", base_url=server.openai_url, max_retries=0)


def test_the_probability_comes_from_token_logprobs_not_the_text(server: ModelServer) -> None:
    server.reply(logprob_reply(0.8, text="No"))
    found = advisor(server).answer(question("unbuffered_io"), SUBJECT)
    assert found.probability == pytest.approx(0.8)


def test_the_request_asks_the_exact_model_for_one_token_and_its_alternatives(
    server: ModelServer,
) -> None:
    server.reply(logprob_reply(0.3))
    advisor(server).answer(question("unbuffered_io"), SUBJECT)
    body = server.chat_requests[0].body
    assert body["model"] == "classifier-2025-06-01"
    assert (body["logprobs"], body["top_logprobs"]) == (True, 20)
    assert body["max_completion_tokens"] == 1
    assert body["temperature"] == 0.0
    user = body["messages"][-1]["content"]
    assert "fmt.Println(x)" in user
    assert '"question": "unbuffered_io"' in user
    assert SUBJECT.digest in user


def test_an_answer_reported_by_another_model_is_refused(server: ModelServer) -> None:
    server.reply(logprob_reply(0.9, model="classifier-latest"))
    with pytest.raises(PinnedBuildMismatch, match="classifier-latest"):
        advisor(server).answer(question("allocation"), SUBJECT)


def test_a_dated_snapshot_answering_for_the_id_is_refused() -> None:
    with ModelServer(models=["classifier"], reported_model="classifier-2025-06-01") as running:
        running.reply(logprob_reply(0.9))
        endpoint = EndpointAdvisor("openai:classifier", base_url=running.openai_url)
        with pytest.raises(PinnedBuildMismatch, match="classifier-2025-06-01"):
            endpoint.answer(question("allocation"), SUBJECT)


def test_an_endpoint_without_logprobs_is_refused_with_a_clear_message() -> None:
    with ModelServer(models=["plain-model"], logprobs_supported=False) as running:
        running.reply(Reply("Yes"))
        endpoint = EndpointAdvisor("openai:plain-model", base_url=running.openai_url)
        with pytest.raises(LogprobsRefused, match="cannot use an endpoint without them"):
            endpoint.answer(question("allocation"), SUBJECT)


def test_an_answer_that_is_neither_yes_nor_no_is_refused(server: ModelServer) -> None:
    server.reply(Reply("The", tokens=[("The", -0.1, {"The": -0.1, "This": -3.0})]))
    with pytest.raises(NoYesNoAnswer):
        advisor(server).answer(question("allocation"), SUBJECT)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("anthropic:claude-3-5-haiku", "no token probabilities"),
        ("heuristic", "openai:MODEL"),
        ("openai:", "openai:MODEL"),
    ],
)
def test_a_model_id_that_cannot_give_probabilities_is_refused(spec: str, words: str) -> None:
    with pytest.raises(AdvisorConfigError, match=words):
        EndpointAdvisor(spec, base_url="http://127.0.0.1:9/v1")


def test_answers_are_cached_by_model_question_and_function(
    server: ModelServer, tmp_path: Path
) -> None:
    server.answer_with(lambda request: logprob_reply(0.7))
    with AnswerCache(tmp_path / "cache.sqlite") as cache:
        first = CachedAnswerer(advisor(server), cache)
        first.answer(question("allocation"), SUBJECT)
        first.answer(question("allocation"), SUBJECT)
        assert len(server.chat_requests) == 1
        first.answer(question("superlinear"), SUBJECT)
        first.answer(question("allocation"), OTHER)
        assert len(server.chat_requests) == 3
        other_build = CachedAnswerer(advisor(server, "classifier-2025-07-01"), cache)
        again = other_build.answer(question("allocation"), SUBJECT)
        assert len(server.chat_requests) == 4
        assert again.probability == pytest.approx(0.7)
        assert cache.count() == 4
    with AnswerCache(tmp_path / "cache.sqlite") as reopened:
        kept = CachedAnswerer(advisor(server), reopened)
        assert kept.answer(question("allocation"), SUBJECT).probability == pytest.approx(0.7)
        assert kept.hits == 1
    assert len(server.chat_requests) == 4
