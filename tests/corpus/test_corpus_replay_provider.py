from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.agents.providers import (
    ChatMessage,
    ProviderError,
    ReplayMissing,
    ReplayProvider,
    messages_digest,
)
from speedproof.agents.providers.replay import recorded_line

HELLO = [ChatMessage(role="system", content="rules"), ChatMessage(role="user", content="hello")]
OTHER = [ChatMessage(role="user", content="something else")]


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_keyed_answer_is_found_by_the_conversation_digest_and_replays_every_time(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "r.jsonl", recorded_line("teacher", "hi", messages=HELLO, model="m1"))
    provider = ReplayProvider(path)
    first = provider.complete(HELLO, role="teacher")
    again = provider.complete(HELLO, role="teacher")
    assert (first.text, first.model) == ("hi", "m1")
    assert again == first


def test_in_order_answers_are_used_once_each_per_role(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        recorded_line("student", "one"),
        recorded_line("teacher", "t"),
        recorded_line("student", "two"),
    )
    provider = ReplayProvider(path)
    assert provider.complete(OTHER, role="student").text == "one"
    assert provider.complete(HELLO, role="student").text == "two"
    assert provider.complete(OTHER, role="teacher").text == "t"
    with pytest.raises(ReplayMissing, match="student"):
        provider.complete(OTHER, role="student")


def test_a_missing_answer_is_a_named_error_not_an_empty_answer(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", recorded_line("teacher", "hi", messages=HELLO))
    provider = ReplayProvider(path)
    with pytest.raises(ReplayMissing, match=messages_digest(OTHER)[:16]):
        provider.complete(OTHER, role="teacher")
    with pytest.raises(ReplayMissing):
        provider.complete(HELLO, role="student")


def test_a_malformed_recording_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", recorded_line("teacher", "ok"), '{"role": "teacher"}')
    with pytest.raises(ProviderError, match=r"r\.jsonl:2"):
        ReplayProvider(path)


def test_a_missing_recording_file_is_a_provider_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="cannot read"):
        ReplayProvider(tmp_path / "absent.jsonl")


def test_the_digest_depends_on_roles_and_contents_but_not_on_object_identity() -> None:
    same = [ChatMessage(role="system", content="rules"), ChatMessage(role="user", content="hello")]
    swapped = [ChatMessage(role="user", content="rules"), ChatMessage(role="user", content="hello")]
    assert messages_digest(same) == messages_digest(HELLO)
    assert messages_digest(swapped) != messages_digest(HELLO)
