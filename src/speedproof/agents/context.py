"""The machine-readable `<context>` block that ends every role's user message.

The block holds everything a role may know, as JSON, so a hosted model and the offline heuristic
provider read exactly the same facts. Source code inside the JSON may itself contain the text
`<context>` or `</context>` (a template, a test string); both are written with a JSON escape
(`\\u003c` and `<\\/`) so the only literal tags in a message are the block's own, and the block
is always the last one in the message.
"""

from __future__ import annotations

import json
from typing import Any

from speedproof.ground.errors import SpeedproofError

OPEN = "<context>"
CLOSE = "</context>"


class ContextError(SpeedproofError):
    """A message has no well-formed context block, or a context lacks what its role needs."""


def render_context(context: dict[str, Any]) -> str:
    """The block for `context`: the tags on their own lines around indented JSON."""
    try:
        text = json.dumps(context, indent=1, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ContextError(f"the context cannot be written as JSON: {err}") from err
    # "\/" and "\u003c" are plain JSON escapes: json.loads reads them back as "/" and "<".
    text = text.replace(CLOSE, "<\\/context>").replace(OPEN, "\\u003ccontext>")
    return f"{OPEN}\n{text}\n{CLOSE}"


def extract_context(text: str) -> dict[str, Any]:
    """The JSON object of the last context block in `text`; ContextError when there is none."""
    start = text.rfind(OPEN)
    if start < 0:
        raise ContextError(f"no {OPEN} block in the message")
    end = text.find(CLOSE, start)
    if end < 0:
        raise ContextError(f"the last {OPEN} block is not closed by {CLOSE}")
    body = text[start + len(OPEN) : end]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as err:
        raise ContextError(f"the {OPEN} block is not JSON: {err}") from err
    if not isinstance(value, dict):
        raise ContextError(f"the {OPEN} block holds a {type(value).__name__}, not a JSON object")
    return value
