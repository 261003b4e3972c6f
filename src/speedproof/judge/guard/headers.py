"""Reading a patch's headers the way every tool that might apply it could read them.

The guard must see every file name that `git apply` or GNU `patch` could act on. Rather than
reimplement either tool's parser (and disagree with it on some edge), this module reads every
line as a potential header and, for each, yields every name a tool could take from it: the
whole rest of the line, each prefix and suffix ending at whitespace (where a timestamp or the
second `diff --git` name may begin), and the C-unquoted form of each quoted one. Hunk lines are
scanned too: a hunk line can only collide with a header when it begins `--- `/`+++ `, and the
price of such a collision is a refused patch, not a missed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Git's apply.c and GNU patch's pch.c, merged. Order matters: longer prefixes first.
_NAME_FORMS = (
    "diff --git ",
    "rename from ",
    "rename to ",
    "rename old ",
    "rename new ",
    "copy from ",
    "copy to ",
    "Index:",
    "--- ",
    "+++ ",
    "*** ",
)
_MODE_FORMS = ("old mode ", "new mode ", "new file mode ", "deleted file mode ")
_INDEX_MODE = re.compile(r"index [0-9a-fA-F]+\.\.[0-9a-fA-F]+ ([0-7]+)\s*$")
_BINARY = re.compile(r"(GIT binary patch|Binary files .* differ)\s*$")
# A normal-diff or ed-script command (`5a6,7`, `3,4d`): GNU patch would run such a script
# through `ed`, which has no notion of protected paths.
_ED_COMMAND = re.compile(r"\d+(,\d+)?[acd](\d+(,\d+)?)?\s*$")
# Each blank in a header line is a place a name might end, so the candidates grow with the square
# of the blanks; names are at most PATH_MAX (4096) bytes on Linux. Past these, refuse the header.
MAX_HEADER_CHARS = 2 * 4096 + 64
MAX_BLANKS = 32
# GNU patch accepts headers indented by blanks or `X` (mail and shar remnants).
_INDENT = " \tX"
# Where a name may end: git splits on space and tab, GNU patch on C isspace(), which adds \v \f \r.
_BLANKS = " \t\v\f\r"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(frozen=True)
class HeaderName:
    """One name a tool could take from header line `line` (1-based), spelled as written."""

    form: str
    name: str
    line: int


@dataclass(frozen=True)
class Marker:
    """A line that is not a name but matters: a mode, a binary patch, a submodule, an ed command."""

    kind: str  # "mode", "binary", "submodule", "ed", "malformed"
    form: str
    value: str
    line: int


@dataclass(frozen=True)
class PatchHeaders:
    names: tuple[HeaderName, ...]
    markers: tuple[Marker, ...]


def unquote_c(text: str) -> str | None:
    """The name in a C-quoted string at the start of `text` (git's quoting), or None."""
    if not text.startswith('"'):
        return None
    out = bytearray()
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return out.decode("utf-8", "surrogateescape")
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            index += 1
            continue
        index = _unescape(text, index + 1, out)
        if index < 0:
            return None
    return None


def _unescape(text: str, index: int, out: bytearray) -> int:
    """Append the byte escaped at `text[index]`; return the next index, or -1 if malformed."""
    if index >= len(text):
        return -1
    digits = re.match(r"[0-7]{1,3}", text[index:])
    if digits:
        out.append(int(digits.group(), 8) & 0xFF)
        return index + len(digits.group())
    if text[index] in _ESCAPES:
        out.append(_ESCAPES[text[index]])
        return index + 1
    return -1


def name_candidates(rest: str) -> set[str]:
    """Every name a tool could read from the text after a header keyword."""
    found = {rest, rest.strip()}
    text = rest.strip()
    for index, char in enumerate(text):
        if char in _BLANKS:
            found.add(text[:index].strip())
            found.add(text[index + 1 :].strip())
    for candidate in list(found):
        unquoted = unquote_c(candidate)
        if unquoted is not None:
            found.add(unquoted)
    found.discard("")
    return found


def _lines(text: str) -> Iterator[tuple[int, str]]:
    # Split on "\n" only: both tools do, while str.splitlines also splits on \f, \v, \x1c...
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line[:-1] if line.endswith("\r") else line


def _starts_with_form(body: str, form: str) -> bool:
    # A tab where the keyword ends in a space is read as the same header by a lenient parser.
    return body.startswith(form) or (form.endswith(" ") and body.startswith(form[:-1] + "\t"))


def _names_in(line: str, number: int) -> tuple[list[HeaderName], list[Marker]]:
    names: list[HeaderName] = []
    markers: list[Marker] = []
    for body in dict.fromkeys((line, line.lstrip(_INDENT))):
        form = next((form for form in _NAME_FORMS if _starts_with_form(body, form)), None)
        if form is None:
            continue
        rest = body[len(form) :]
        if len(rest) > MAX_HEADER_CHARS or len(re.findall(r"\s", rest.strip())) > MAX_BLANKS:
            markers.append(Marker("malformed", form.strip(), rest[:80], number))
            continue
        names.extend(HeaderName(form.strip(), name, number) for name in name_candidates(rest))
    return names, markers


def _markers_in(line: str, number: int) -> list[Marker]:
    body = line.lstrip(_INDENT)
    found = [
        Marker("mode", form.strip(), body[len(form) :].strip(), number)
        for form in _MODE_FORMS
        if body.startswith(form)
    ]
    index_mode = _INDEX_MODE.match(body)
    if index_mode:
        found.append(Marker("mode", "index", index_mode.group(1), number))
    if _BINARY.match(body):
        found.append(Marker("binary", body.split(" ")[0], body, number))
    if "\0" in line:
        found.append(Marker("binary", "NUL", "a NUL byte", number))
    if line[1:].startswith("Subproject commit "):
        found.append(Marker("submodule", "Subproject commit", line[1:], number))
    if _ED_COMMAND.match(line):
        found.append(Marker("ed", "ed command", line, number))
    return found


def read_headers(text: str) -> PatchHeaders:
    """Every header name and every significant marker line in a patch text."""
    names: list[HeaderName] = []
    markers: list[Marker] = []
    for number, line in _lines(text):
        line_names, line_markers = _names_in(line, number)
        names.extend(line_names)
        markers.extend(line_markers)
        markers.extend(_markers_in(line, number))
    return PatchHeaders(names=tuple(names), markers=tuple(markers))
