"""What the reward API accepts as a completion, and the named error for anything else.

Accepted (every shape TRL's GRPOTrainer and chat-format trainers pass):
  "text"                                                  the answer itself
  [{"role": "assistant", "content": "text"}, ...]         a conversation: its last message
  [{"role": "assistant", "content": [{"type": "text", "text": "..."}, ...]}]
                                                          content as parts (OpenAI style): the
                                                          text parts joined in order
  {"role": "assistant", "content": ...}                   one message on its own

A message whose content is None (a tool call) and an empty conversation are answers without a
patch: they score as wrong, like any text without one. Anything else (a list of strings, a message
without `content`, a part that is not text, bytes) raises RewardInputError naming what was found:
scoring it as "no patch" would hide a trainer's wiring bug behind a run of -1.0 rewards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from speedproof.ground.errors import SpeedproofError

ACCEPTED = (
    "a str, a message {'role', 'content'} or a list of messages, whose content is a str, None "
    "or a list of {'type': 'text', 'text': str} parts"
)
# "output_text" is the OpenAI Responses API's name for the same part.
_TEXT_PARTS = frozenset({"text", "output_text"})


class RewardInputError(SpeedproofError, ValueError):
    """A completion or a dataset column the reward API cannot read; the message names what was
    found and what is accepted."""


def completion_text(completion: object, index: int = 0) -> str:
    """The answer in a completion (see the module docstring); `index` names it in errors."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _message_text(completion, index)
    if isinstance(completion, Sequence) and not isinstance(completion, bytes | bytearray):
        if not completion:
            return ""
        return _message_text(completion[-1], index)
    raise _refused(index, f"a {type(completion).__name__}")


def _message_text(message: object, index: int) -> str:
    if not isinstance(message, Mapping):
        raise _refused(index, f"a list whose last item is a {type(message).__name__}")
    if "content" not in message:
        keys = ", ".join(sorted(map(str, message))) or "none"
        raise _refused(index, f"a message without 'content' (keys: {keys})")
    content: Any = message["content"]
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        return "".join(_part_text(part, index) for part in content)
    raise _refused(index, f"message content of type {type(content).__name__}")


def _part_text(part: object, index: int) -> str:
    if not isinstance(part, Mapping):
        raise _refused(index, f"a content part of type {type(part).__name__}")
    kind = part.get("type")
    text = part.get("text")
    if kind not in _TEXT_PARTS or not isinstance(text, str):
        raise _refused(index, f"a content part of type {kind!r} without text")
    return text


def _refused(index: int, found: str) -> RewardInputError:
    return RewardInputError(f"completion {index}: {found}; accepted: {ACCEPTED}")


def column(kwargs: Mapping[str, Any], name: str, count: int) -> list[str]:
    """Dataset column `name` as passed to a TRL reward function, one value per completion."""
    if name not in kwargs:
        present = ", ".join(sorted(kwargs)) or "none"
        raise RewardInputError(
            f"the reward needs dataset column {name!r} (each row's case id, as "
            f"`training_prompts()` rows carry it); columns passed: {present}"
        )
    values = kwargs[name]
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise RewardInputError(
            f"column {name!r} must be a list of case ids, not a {type(values).__name__}"
        )
    if len(values) != count:
        raise RewardInputError(
            f"column {name!r} has {len(values)} values for {count} completions; one each"
        )
    return [str(value) for value in values]
