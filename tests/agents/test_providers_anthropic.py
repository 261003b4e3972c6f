"""The Anthropic provider against a real HTTP server through the real `anthropic` SDK."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from speedproof.agents.providers.anthropic_messages import AnthropicProvider, split_system
from speedproof.agents.providers.base import ChatMessage
from speedproof.agents.providers.errors import (
    EndpointStatusError,
    IncompleteAnswer,
    LogprobsUnavailable,
    PreflightError,
    ProviderConfigError,
    SilenceTimeout,
)
from speedproof.agents.providers.preflight import preflight
from speedproof.agents.providers.pricing import Price, PriceTable
from speedproof.agents.providers.retry import RetryPolicy
from support.model_server import ChatRequest, ModelServer, Reply

SECRET = "sk-ant-test-secret-0123456789"
MESSAGES = [
    ChatMessage(role="system", content="Answer with one JSON object."),
    ChatMessage(role="user", content='Review this.\n<context>\n{"role": "reviewer"}\n</context>'),
]
FAST_RETRY = RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=["claude-test"]) as running:
        yield running


def _provider(server: ModelServer, **options: object) -> AnthropicProvider:
    settings: dict[str, object] = {
        "base_url": server.anthropic_url,
        "retry": FAST_RETRY,
        "sleep": lambda _s: None,
        "rng": random.Random(7),
    }
    settings.update(options)
    return AnthropicProvider("claude-test", **settings)  # type: ignore[arg-type]


def test_a_streamed_answer_carries_text_tokens_and_the_model_the_server_reported(
    server: ModelServer,
) -> None:
    server.reply(
        Reply('{"concerns": []}', model="claude-test-20250929", input_tokens=300, output_tokens=7)
    )
    completion = _provider(server).complete(MESSAGES, role="reviewer")
    assert completion.text == '{"concerns": []}'
    assert completion.model == "claude-test-20250929"
    assert completion.provider == "anthropic:claude-test"
    assert (completion.input_tokens, completion.output_tokens) == (300, 7)
    assert completion.attempts == 1
    assert completion.duration_s > 0


def test_system_messages_go_in_the_system_field_and_the_answer_is_streamed(
    server: ModelServer,
) -> None:
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return "ok"

    server.answer_with(answer)
    _provider(server, max_output_tokens=512).complete(MESSAGES, role="reviewer")
    request = seen[0]
    assert request.system == "Answer with one JSON object."
    assert [m["role"] for m in request.messages] == ["user"]
    assert request.role == "reviewer"
    assert request.stream
    assert request.body["max_tokens"] == 512


def test_several_system_messages_are_joined_by_a_blank_line() -> None:
    system, turns = split_system(
        [
            ChatMessage(role="system", content="one"),
            ChatMessage(role="user", content="u"),
            ChatMessage(role="system", content="two"),
            ChatMessage(role="assistant", content="a"),
        ]
    )
    assert system == "one\n\ntwo"
    assert [t["role"] for t in turns] == ["user", "assistant"]


def test_cost_is_priced_from_the_table_by_the_reported_model(server: ModelServer) -> None:
    server.reply(Reply("ok", model="claude-priced", input_tokens=2000, output_tokens=100))
    prices = PriceTable(
        {"127.0.0.1": {"claude-priced": Price(input_usd_per_mtok=3.0, output_usd_per_mtok=15.0)}}
    )
    completion = _provider(server, prices=prices).complete(MESSAGES, role="reviewer")
    assert completion.cost_usd == pytest.approx((2000 * 3.0 + 100 * 15.0) / 1_000_000)


def test_an_unpriced_model_has_no_cost(server: ModelServer) -> None:
    server.reply(Reply("ok", input_tokens=2000, output_tokens=100))
    assert _provider(server).complete(MESSAGES, role="reviewer").cost_usd is None


def test_a_server_that_goes_silent_mid_stream_is_a_silence_timeout(server: ModelServer) -> None:
    server.reply("an answer that stops half way through")
    server.silence_after(1)
    with pytest.raises(SilenceTimeout, match="silence timeout"):
        _provider(server, silence_timeout_s=0.5).complete(MESSAGES, role="reviewer")
    assert len(server.chat_requests) == 1


def test_rate_limits_are_retried_until_the_answer_comes(server: ModelServer) -> None:
    server.fail_next(2, 429, message="rate limited")
    server.reply("finally")
    completion = _provider(server).complete(MESSAGES, role="reviewer")
    assert completion.text == "finally"
    assert completion.attempts == 3
    assert len(server.chat_requests) == 3


def test_an_overloaded_server_is_retried(server: ModelServer) -> None:
    server.fail_next(1, 529, message="Overloaded")
    server.reply("ok")
    assert _provider(server).complete(MESSAGES, role="reviewer").attempts == 2


def test_an_overloaded_event_mid_stream_is_retried(server: ModelServer) -> None:
    server.reply("half an answer", "the whole answer")
    server.error_after(1, "overloaded_error", message="Overloaded")
    completion = _provider(server).complete(MESSAGES, role="reviewer")
    assert (completion.text, completion.attempts) == ("the whole answer", 2)


def test_a_bad_request_fails_after_one_request_with_the_servers_message(
    server: ModelServer,
) -> None:
    server.fail_next(1, 400, message="max_tokens: must be at most 64000")
    with pytest.raises(EndpointStatusError, match="max_tokens: must be at most 64000") as caught:
        _provider(server).complete(MESSAGES, role="reviewer")
    assert caught.value.status == 400
    assert len(server.chat_requests) == 1


def test_logprobs_are_refused_without_sending_anything(server: ModelServer) -> None:
    with pytest.raises(LogprobsUnavailable, match="cannot return token probabilities"):
        _provider(server).complete(MESSAGES, role="advisor", logprobs=True, top_logprobs=5)
    assert server.requests == []


def test_a_stream_without_message_stop_is_an_incomplete_answer(server: ModelServer) -> None:
    server.reply(Reply('{"concerns": [', finish=None))
    with pytest.raises(IncompleteAnswer, match="message_stop"):
        _provider(server).complete(MESSAGES, role="reviewer")


def test_the_api_key_is_sent_only_as_the_credential_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with ModelServer(models=["claude-test"], require_key=SECRET) as server:
        server.reply("ok")
        provider = _provider(server)
        provider.complete(MESSAGES, role="reviewer")
        request = server.chat_requests[0]
    carrying = {k for k, v in request.headers.items() if SECRET in v}
    assert carrying == {"authorization"}
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET.encode() not in request.raw_body
    assert SECRET not in repr(provider)


def test_a_remote_endpoint_without_a_key_is_refused() -> None:
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-sonnet-4-5")


def test_an_auth_token_in_the_environment_is_not_used_instead_of_the_key(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-from-elsewhere")
    server.reply("ok")
    _provider(server).complete(MESSAGES, role="reviewer")
    assert "token-from-elsewhere" not in repr(server.chat_requests[0].headers)


def test_preflight_confirms_the_model(server: ModelServer) -> None:
    report = preflight(_provider(server))
    assert (report.checked, report.served_model) == (True, "claude-test")


def test_a_typo_in_the_model_fails_preflight_with_the_close_matches() -> None:
    with ModelServer(models=["claude-sonnet-4-5", "claude-haiku-4-5"]) as server:
        provider = AnthropicProvider("claude-sonet-4-5", base_url=server.anthropic_url)
        with pytest.raises(PreflightError, match=r"did you mean claude-sonnet-4-5"):
            preflight(provider)
        paths = [r.path for r in server.requests]
    assert paths == ["/v1/models/claude-sonet-4-5", "/v1/models"]
