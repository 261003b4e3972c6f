"""A patch's text made plain before anything reads it: line ends, a code fence, a last newline."""

from __future__ import annotations


def normalise_patch(text: str) -> str:
    """CRLF to LF, drop a surrounding markdown code fence, end with a newline. Nothing more."""
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    start = next((index for index, line in enumerate(lines) if line.strip()), None)
    if start is not None and lines[start].lstrip().startswith("```"):
        closing = [
            index for index, line in enumerate(lines) if index > start and line.strip() == "```"
        ]
        end = closing[-1] if closing else len(lines)
        text = "\n".join(lines[start + 1 : end])
    if text and not text.endswith("\n"):
        text += "\n"
    return text
