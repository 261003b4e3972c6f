"""Provider specs, and the shared parts under both hosted providers: retry policy, prices,
credentials and the offline preflight."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from speedproof.agents.providers.anthropic_messages import AnthropicProvider
from speedproof.agents.providers.base import ChatMessage, Completion
from speedproof.agents.providers.credentials import (
    ApiKey,
    check_base_url,
    is_loopback,
    redact,
    resolve_api_key,
)
from speedproof.agents.providers.errors import (
    EndpointStatusError,
    ProviderConfigError,
    RetriesExhausted,
)
from speedproof.agents.providers.openai_compat import OpenAICompatProvider
from speedproof.agents.providers.preflight import close_matches, preflight
from speedproof.agents.providers.pricing import Price, PriceTable, shipped_prices
from speedproof.agents.providers.registry import (
    ACCEPTED_FORMS,
    HEURISTIC_MODULE,
    make_provider,
    parse_spec,
)
from speedproof.agents.providers.replay import ReplayProvider, recorded_line
from speedproof.agents.providers.retry import RetryPolicy, call_with_retries
from support.model_server import ModelServer

LOOPBACK = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


# specs -------------------------------------------------------------------------------------


def test_a_model_name_may_hold_colons_and_slashes() -> None:
    assert parse_spec("openai:qwen2.5-coder:7b").argument == "qwen2.5-coder:7b"
    assert parse_spec("openai:openai/gpt-4o-mini").argument == "openai/gpt-4o-mini"
    assert parse_spec(" heuristic ").kind == "heuristic"


@pytest.mark.parametrize("spec", ["openai", "openai:", "anthropic: ", "replay:", "heuristic:x"])
def test_a_malformed_spec_is_a_named_error_listing_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ProviderConfigError, match="malformed") as caught:
        parse_spec(spec)
    assert all(form in str(caught.value) for form in ACCEPTED_FORMS)


def test_an_unknown_provider_is_a_named_error_listing_the_accepted_forms() -> None:
    with pytest.raises(ProviderConfigError, match=r"unknown provider 'gemini'.*openai:MODEL"):
        make_provider("gemini:pro")


def test_an_openai_spec_builds_an_openai_compatible_provider() -> None:
    provider = make_provider("openai:qwen2.5-coder", base_url=LOOPBACK, silence_timeout_s=5)
    assert isinstance(provider, OpenAICompatProvider)
    assert provider.name == "openai:qwen2.5-coder"
    assert provider.endpoint.base_url == LOOPBACK
    assert provider.endpoint.silence_timeout_s == 5
    assert provider.endpoint.retry.max_retries == 4


def test_an_anthropic_spec_builds_an_anthropic_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    provider = make_provider("anthropic:claude-sonnet-4-5", max_retries=1)
    assert isinstance(provider, AnthropicProvider)
    assert provider.endpoint.base_url == "https://api.anthropic.com"
    assert provider.endpoint.retry.max_retries == 1


def test_a_replay_spec_builds_a_replay_provider(tmp_path: Path) -> None:
    recording = tmp_path / "answers.jsonl"
    recording.write_text(recorded_line("optimizer", "{}") + "\n", encoding="utf-8")
    provider = make_provider(f"replay:{recording}")
    assert isinstance(provider, ReplayProvider)
    assert provider.complete([ChatMessage(role="user", content="x")], role="optimizer").text == "{}"


def test_a_base_url_with_an_offline_provider_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="base_url"):
        make_provider(f"replay:{tmp_path / 'a.jsonl'}", base_url=LOOPBACK)


def test_the_heuristic_spec_imports_the_heuristic_provider_by_its_path() -> None:
    if importlib.util.find_spec(HEURISTIC_MODULE) is None:
        with pytest.raises(ProviderConfigError, match="heuristic provider is not installed"):
            make_provider("heuristic")
    else:
        provider = make_provider("heuristic")
        assert type(provider).__name__ == "HeuristicProvider"
        assert callable(provider.complete)


def test_retries_given_to_make_provider_are_the_ones_applied() -> None:
    with ModelServer(models=["test-model"]) as server:
        server.fail_next(5, 500, message="boom")
        provider = make_provider("openai:test-model", base_url=server.openai_url, max_retries=1)
        with pytest.raises(RetriesExhausted) as caught:
            provider.complete([ChatMessage(role="user", content="x")], role="analyst")
        assert caught.value.attempts == 2
        assert len(server.chat_requests) == 2


# preflight of offline providers ------------------------------------------------------------


def test_an_offline_provider_passes_preflight_unchecked(tmp_path: Path) -> None:
    recording = tmp_path / "answers.jsonl"
    recording.write_text("", encoding="utf-8")
    report = preflight(ReplayProvider(recording))
    assert not report.checked
    assert report.provider == "replay:answers.jsonl"
    assert report.endpoint is None


def test_close_matches_rank_the_nearest_names_first() -> None:
    ids = ["gpt-4o", "gpt-4o-mini", "o4-mini", "text-embedding-3-small"]
    assert close_matches("gpt-4o-mnii", ids)[0] == "gpt-4o-mini"
    assert close_matches("completely-else", ids) == []


# retry policy ------------------------------------------------------------------------------


def test_the_wait_ceiling_doubles_per_retry_and_stops_at_the_cap() -> None:
    policy = RetryPolicy(max_retries=8, base_delay_s=1.0, max_delay_s=30.0)
    assert [policy.ceiling(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_each_wait_is_jittered_between_zero_and_the_ceiling() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=30.0)
    rng = random.Random(1)
    waits = [policy.delay(3, rng=rng) for _ in range(500)]
    assert all(0 <= w <= 4 for w in waits)
    assert len({round(w, 6) for w in waits}) > 400


def test_retry_after_is_a_lower_bound_capped_by_the_policy() -> None:
    policy = RetryPolicy(base_delay_s=0.0, max_delay_s=10.0)
    rng = random.Random(1)
    assert policy.delay(1, rng=rng, retry_after_s=3.0) == 3.0
    assert policy.delay(1, rng=rng, retry_after_s=3600.0) == 10.0


def test_a_non_retryable_failure_is_raised_on_the_first_attempt() -> None:
    calls: list[int] = []

    def refuse() -> str:
        calls.append(1)
        raise EndpointStatusError("HTTP 400", status=400)

    with pytest.raises(EndpointStatusError):
        call_with_retries(
            refuse, RetryPolicy(), sleep=lambda _s: None, rng=random.Random(1), what="x"
        )
    assert len(calls) == 1


def test_zero_retries_means_one_attempt() -> None:
    calls: list[int] = []

    def overloaded() -> str:
        calls.append(1)
        raise EndpointStatusError("HTTP 503", status=503)

    with pytest.raises(RetriesExhausted):
        call_with_retries(
            overloaded,
            RetryPolicy(max_retries=0),
            sleep=lambda _s: None,
            rng=random.Random(1),
            what="x",
        )
    assert len(calls) == 1


# prices ------------------------------------------------------------------------------------


def test_the_shipped_table_prices_a_vendor_model_only_on_the_vendors_endpoint() -> None:
    table = shipped_prices()
    vendor = table.cost_usd(
        "https://api.openai.com/v1", "gpt-4o-mini", input_tokens=1_000_000, output_tokens=0
    )
    assert vendor == pytest.approx(0.15)
    assert table.price("http://127.0.0.1:8000/v1", "gpt-4o-mini") is None
    assert table.price("https://api.openai.com/v1", "gpt-4o-mini-2099-01-01") is None


def test_cached_prompt_tokens_are_priced_at_the_cached_rate_or_not_at_all() -> None:
    with_cache = Price(
        input_usd_per_mtok=2.0, output_usd_per_mtok=8.0, cached_input_usd_per_mtok=0.5
    )
    table = PriceTable(
        {"h": {"a": with_cache, "b": Price(input_usd_per_mtok=2.0, output_usd_per_mtok=8.0)}}
    )
    cost = table.cost_usd(
        "https://h/v1", "a", input_tokens=1000, output_tokens=0, cached_input_tokens=400
    )
    assert cost == pytest.approx((600 * 2.0 + 400 * 0.5) / 1_000_000)
    assert (
        table.cost_usd(
            "https://h/v1", "b", input_tokens=1000, output_tokens=0, cached_input_tokens=1
        )
        is None
    )


def test_a_call_above_the_long_context_threshold_has_no_price() -> None:
    table = shipped_prices()
    url = "https://api.anthropic.com"
    assert (
        table.cost_usd(url, "claude-sonnet-4-5", input_tokens=200_000, output_tokens=0) is not None
    )
    assert table.cost_usd(url, "claude-sonnet-4-5", input_tokens=200_001, output_tokens=0) is None


def test_a_malformed_price_file_is_a_named_error(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"hosts": {"h": {"m": {"input_usd_per_mtok": -1}}}}', encoding="utf-8")
    with pytest.raises(ProviderConfigError, match="not a price table"):
        PriceTable.from_file(bad)


# credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.0.5:8000/v1", False),
        ("https://openrouter.ai/api/v1", False),
        ("http://127.0.0.1.example.com/v1", False),
    ],
)
def test_loopback_is_recognised_by_address_not_by_prefix(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


@pytest.mark.parametrize("url", ["ftp://host/v1", "127.0.0.1:8000", "http://user:pw@host/v1"])
def test_a_bad_base_url_is_refused(url: str) -> None:
    with pytest.raises(ProviderConfigError, match="base URL"):
        check_base_url(url)


def test_a_key_never_shows_in_its_repr_and_is_redacted_from_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef")
    key = resolve_api_key(
        base_url="https://api.openai.com/v1", default_env="OPENAI_API_KEY", api_key_env=None
    )
    assert "sk-live-abcdef" not in repr(key) + str(key)
    assert redact("echo sk-live-abcdef back", key) == "echo [redacted] back"
    assert ApiKey("v", "X").source == "X"


def test_completion_keeps_its_old_shape_and_defaults() -> None:
    completion = Completion(text="t", model="m")
    assert (completion.input_tokens, completion.output_tokens) == (0, 0)
    assert (completion.provider, completion.cost_usd, completion.duration_s) == ("", None, 0.0)
    assert (completion.attempts, completion.logprobs) == (1, None)
