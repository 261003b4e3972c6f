"""The OpenAI-compatible provider against a real HTTP server through the real `openai` SDK."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator

import pytest

from speedproof.agents.providers.base import ChatMessage
from speedproof.agents.providers.credentials import LOCAL_PLACEHOLDER_KEY
from speedproof.agents.providers.errors import (
    ConnectionDropped,
    EndpointStatusError,
    IncompleteAnswer,
    LogprobsUnavailable,
    PreflightError,
    ProviderConfigError,
    RetriesExhausted,
    SilenceTimeout,
    StreamErrorEvent,
)
from speedproof.agents.providers.openai_compat import OpenAICompatProvider
from speedproof.agents.providers.preflight import preflight
from speedproof.agents.providers.pricing import Price, PriceTable
from speedproof.agents.providers.retry import RetryPolicy
from support.model_server import ModelServer, Reply

SECRET = "sk-test-secret-0123456789"
MESSAGES = [
    ChatMessage(role="system", content="Answer with one JSON object."),
    ChatMessage(role="user", content="Which function is slow?"),
]
FAST_RETRY = RetryPolicy(max_retries=4, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SPEEDPROOF_TEST_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(models=["test-model"]) as running:
        yield running


def _provider(server: ModelServer, **options: object) -> OpenAICompatProvider:
    sleeps: list[float] = []
    settings: dict[str, object] = {
        "base_url": server.openai_url,
        "retry": FAST_RETRY,
        "sleep": sleeps.append,
        "rng": random.Random(7),
    }
    settings.update(options)
    return OpenAICompatProvider("test-model", **settings)  # type: ignore[arg-type]


def test_a_streamed_answer_carries_text_tokens_and_the_model_the_server_reported(
    server: ModelServer,
) -> None:
    server.reported_model = "test-model-2025-01-01"
    server.reply(Reply('{"function": "main.parse"}', input_tokens=120, output_tokens=9))
    completion = _provider(server).complete(MESSAGES, role="coordinator")
    assert completion.text == '{"function": "main.parse"}'
    assert completion.model == "test-model-2025-01-01"
    assert completion.provider == "openai:test-model"
    assert (completion.input_tokens, completion.output_tokens) == (120, 9)
    assert completion.attempts == 1
    assert completion.duration_s > 0
    assert completion.logprobs is None


def test_the_answer_is_requested_as_a_stream_with_a_usage_chunk(server: ModelServer) -> None:
    server.reply("ok")
    _provider(server).complete(MESSAGES, role="explorer")
    body = server.chat_requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "test-model"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_cost_is_priced_from_the_table_by_the_reported_model(server: ModelServer) -> None:
    server.reply(Reply("ok", model="priced-snapshot", input_tokens=1000, output_tokens=500))
    prices = PriceTable(
        {"127.0.0.1": {"priced-snapshot": Price(input_usd_per_mtok=1.0, output_usd_per_mtok=2.0)}}
    )
    completion = _provider(server, prices=prices).complete(MESSAGES, role="analyst")
    assert completion.cost_usd == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1_000_000)


def test_a_model_missing_from_the_price_table_has_no_cost(server: ModelServer) -> None:
    server.reply(Reply("ok", input_tokens=1000, output_tokens=500))
    completion = _provider(server).complete(MESSAGES, role="analyst")
    assert completion.cost_usd is None
    assert completion.input_tokens == 1000


def test_a_server_that_goes_silent_mid_stream_is_a_silence_timeout(server: ModelServer) -> None:
    server.reply("a long answer that stops half way through")
    server.silence_after(2)
    with pytest.raises(SilenceTimeout, match="silence timeout"):
        _provider(server, silence_timeout_s=0.5).complete(MESSAGES, role="optimizer")
    assert len(server.chat_requests) == 1


def test_rate_limits_are_retried_until_the_answer_comes(server: ModelServer) -> None:
    sleeps: list[float] = []
    server.fail_next(2, 429, message="slow down")
    server.reply("finally")
    completion = _provider(server, sleep=sleeps.append).complete(MESSAGES, role="reviewer")
    assert completion.text == "finally"
    assert completion.attempts == 3
    assert len(server.chat_requests) == 3
    assert len(sleeps) == 2
    assert all(0 <= s <= FAST_RETRY.max_delay_s for s in sleeps)


def test_server_errors_are_retried_then_given_up_after_max_retries(server: ModelServer) -> None:
    server.fail_next(10, 503, message="upstream overloaded")
    policy = RetryPolicy(max_retries=2, base_delay_s=0.0, max_delay_s=0.0)
    with pytest.raises(RetriesExhausted, match="upstream overloaded") as caught:
        _provider(server, retry=policy).complete(MESSAGES, role="reviewer")
    assert caught.value.attempts == 3
    assert len(server.chat_requests) == 3


def test_a_bad_request_fails_after_one_request_with_the_servers_message(
    server: ModelServer,
) -> None:
    server.fail_next(1, 400, message="messages[1].content: too long")
    with pytest.raises(EndpointStatusError, match=r"HTTP 400: messages\[1\].content: too long"):
        _provider(server).complete(MESSAGES, role="optimizer")
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize("status", [401, 404])
def test_refusals_are_never_retried(server: ModelServer, status: int) -> None:
    server.fail_next(5, status, message="refused")
    with pytest.raises(EndpointStatusError) as caught:
        _provider(server).complete(MESSAGES, role="optimizer")
    assert caught.value.status == status
    assert len(server.chat_requests) == 1


def test_a_retry_after_header_is_a_lower_bound_on_the_wait(server: ModelServer) -> None:
    sleeps: list[float] = []
    server.fail_next(1, 429, retry_after=0.04)
    server.reply("ok")
    policy = RetryPolicy(max_retries=1, base_delay_s=0.0, max_delay_s=1.0)
    _provider(server, retry=policy, sleep=sleeps.append).complete(MESSAGES, role="analyst")
    assert sleeps == [pytest.approx(0.04)]


def test_a_reset_connection_is_retried(server: ModelServer) -> None:
    server.drop_next(1)
    server.reply("after the reset")
    completion = _provider(server).complete(MESSAGES, role="analyst")
    assert completion.text == "after the reset"
    assert completion.attempts == 2


def test_connection_resets_that_persist_exhaust_the_retries(server: ModelServer) -> None:
    server.drop_next(3)
    policy = RetryPolicy(max_retries=2, base_delay_s=0.0, max_delay_s=0.0)
    with pytest.raises(RetriesExhausted) as caught:
        _provider(server, retry=policy).complete(MESSAGES, role="analyst")
    assert isinstance(caught.value.__cause__, ConnectionDropped)


def test_an_error_event_mid_stream_is_retried_when_it_is_a_server_error(
    server: ModelServer,
) -> None:
    server.reply("half an answer", "the whole answer")
    server.error_after(2, "server_error", message="engine crashed")
    completion = _provider(server).complete(MESSAGES, role="optimizer")
    assert completion.text == "the whole answer"
    assert completion.attempts == 2


def test_an_error_event_mid_stream_that_is_not_a_server_error_fails_at_once(
    server: ModelServer,
) -> None:
    server.reply("half an answer", "never sent")
    server.error_after(1, "invalid_request_error", message="prompt rejected")
    with pytest.raises(StreamErrorEvent, match=r"invalid_request_error.*prompt rejected"):
        _provider(server).complete(MESSAGES, role="optimizer")
    assert len(server.chat_requests) == 1


def test_a_stream_cut_before_its_finish_reason_is_an_incomplete_answer(
    server: ModelServer,
) -> None:
    server.reply(Reply('{"causes": [', finish=None))
    with pytest.raises(IncompleteAnswer, match="without a finish reason"):
        _provider(server).complete(MESSAGES, role="analyst")


def test_logprobs_give_the_first_answer_tokens_and_their_alternatives(
    server: ModelServer,
) -> None:
    server.reply(Reply("yes", tokens=[("yes", -0.105, {"yes": -0.105, "no": -2.3, "maybe": -4.0})]))
    completion = _provider(server).complete(MESSAGES, role="advisor", logprobs=True, top_logprobs=2)
    assert completion.logprobs is not None
    first = completion.logprobs[0]
    assert (first.token, first.logprob) == ("yes", -0.105)
    assert first.top == {"yes": -0.105, "no": -2.3}
    body = server.chat_requests[0].body
    assert (body["logprobs"], body["top_logprobs"]) == (True, 2)


def test_an_endpoint_that_returns_no_logprobs_is_a_named_error() -> None:
    with ModelServer(models=["test-model"], logprobs_supported=False) as server:
        server.reply("yes")
        with pytest.raises(LogprobsUnavailable, match="cannot return token probabilities"):
            _provider(server).complete(MESSAGES, role="advisor", logprobs=True, top_logprobs=2)


def test_too_many_top_logprobs_are_refused_before_any_request(server: ModelServer) -> None:
    with pytest.raises(ProviderConfigError, match="top_logprobs"):
        _provider(server).complete(MESSAGES, role="advisor", logprobs=True, top_logprobs=21)
    assert server.requests == []


def test_the_api_key_travels_only_in_the_authorization_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ModelServer(models=["test-model"], require_key=SECRET) as server:
        server.reply("ok")
        provider = _provider(server)
        provider.complete(MESSAGES, role="coordinator")
        request = server.chat_requests[0]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    others = {k: v for k, v in request.headers.items() if k != "authorization"}
    assert SECRET not in repr(others)
    assert SECRET.encode() not in request.raw_body
    assert SECRET not in repr(provider)
    assert "OPENAI_API_KEY" in repr(provider)


def test_a_server_message_echoing_the_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ModelServer(models=["test-model"]) as server:
        server.fail_next(1, 401, message=f"Incorrect API key provided: {SECRET}")
        with pytest.raises(EndpointStatusError) as caught:
            _provider(server).complete(MESSAGES, role="coordinator")
    assert SECRET not in str(caught.value)
    assert "[redacted]" in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)


def test_a_loopback_endpoint_without_a_key_gets_the_placeholder(server: ModelServer) -> None:
    server.reply("ok")
    _provider(server).complete(MESSAGES, role="coordinator")
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_a_remote_endpoint_without_a_key_is_refused() -> None:
    with pytest.raises(ProviderConfigError, match=r"no API key.*OPENAI_API_KEY"):
        OpenAICompatProvider("gpt-4o-mini", base_url="https://models.example.com/v1")


def test_the_vendor_endpoint_without_a_key_is_refused() -> None:
    with pytest.raises(ProviderConfigError, match=r"api\.openai\.com"):
        OpenAICompatProvider("gpt-4o-mini")


def test_a_named_key_variable_is_used_and_must_be_set(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ProviderConfigError, match="SPEEDPROOF_TEST_KEY is not set"):
        _provider(server, api_key_env="SPEEDPROOF_TEST_KEY")
    monkeypatch.setenv("SPEEDPROOF_TEST_KEY", "named-key-value")
    server.reply("ok")
    _provider(server, api_key_env="SPEEDPROOF_TEST_KEY").complete(MESSAGES, role="analyst")
    assert server.chat_requests[0].headers["authorization"] == "Bearer named-key-value"


def test_an_unknown_model_fails_at_call_time_without_retries(server: ModelServer) -> None:
    provider = OpenAICompatProvider("no-such-model", base_url=server.openai_url, retry=FAST_RETRY)
    with pytest.raises(EndpointStatusError, match="does not exist") as caught:
        provider.complete(MESSAGES, role="analyst")
    assert caught.value.status == 404
    assert len(server.chat_requests) == 1


def test_preflight_confirms_the_endpoint_serves_the_model(server: ModelServer) -> None:
    report = preflight(_provider(server))
    assert report.checked
    assert report.served_model == "test-model"
    assert report.endpoint == server.openai_url
    assert [r.path for r in server.requests] == ["/v1/models/test-model"]


def test_a_typo_in_the_model_fails_preflight_with_the_close_matches() -> None:
    with ModelServer(models=["qwen2.5-coder", "llama3.1", "mistral"]) as server:
        provider = OpenAICompatProvider("qwen2.5-codr", base_url=server.openai_url)
        with pytest.raises(PreflightError, match=r"did you mean qwen2\.5-coder"):
            preflight(provider)
        assert server.chat_requests == []


def test_a_server_that_only_lists_its_models_passes_preflight() -> None:
    with ModelServer(models=["qwen2.5-coder"], retrieve_models=False) as server:
        provider = OpenAICompatProvider("qwen2.5-coder", base_url=server.openai_url)
        report = preflight(provider)
    assert report.served_model == "qwen2.5-coder"
    assert report.listed_models == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_preflight_of_a_dead_endpoint_fails_at_once() -> None:
    provider = OpenAICompatProvider(
        "test-model", base_url=f"http://127.0.0.1:{_free_port()}/v1", retry=FAST_RETRY
    )
    with pytest.raises(PreflightError, match="does not answer"):
        preflight(provider)


def test_preflight_with_a_refused_key_names_the_key_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    refused = r"HTTP 401.*refused the API key from OPENAI_API_KEY"
    with (
        ModelServer(models=["test-model"], require_key=SECRET) as server,
        pytest.raises(PreflightError, match=refused),
    ):
        preflight(_provider(server))
