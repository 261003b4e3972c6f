"""Where each hunk of a patch was meant to go, and where the applying tool says it put it.

The patch side: every file section (a `diff --git` line, or a `---`/`+++` pair outside one) with
its hunks, each hunk's new-side lines and the function context after its second `@@`. The tool
side: `git apply --verbose` and GNU patch both print `Hunk #2 succeeded at 17 with fuzz 1
(offset 3 lines).` for a hunk they did not place exactly where its header said, numbered within
its file, after a line that starts the file (`Checking patch x...`, `patching file x`). Files are
matched to sections by order, as both tools process them; "at" is a line of the new file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from speedproof.judge.guard.headers import unquote_c
from speedproof.judge.guard.patch_names import strip_first

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_FILE_START = re.compile(r"^(?:patching file |checking file |Checking patch )")
_LANDED = re.compile(
    r"^Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\.$"
)


@dataclass(frozen=True)
class Hunk:
    """One hunk: its number within its file (from 1, as both tools count), where its header puts
    its new side, the function context, and its new-side lines (context and added, unmarked)."""

    number: int
    new_start: int
    context: str
    lines: tuple[str, ...]
    added: tuple[int, ...]  # indexes into `lines`


@dataclass(frozen=True)
class FilePatch:
    """One file section; `path` is the new name after `-p1` (None when the file is deleted)."""

    path: str | None
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class Landing:
    """A hunk the tool did not place where its header said: file section (from 0), hunk number,
    the new-file line it starts at, and how far it moved."""

    file: int
    hunk: int
    at: int
    fuzz: int
    offset: int


def read_landings(output: str) -> tuple[Landing, ...]:
    """Every `Hunk #n succeeded at …` line of a tool's output, with the file it belongs to."""
    found: list[Landing] = []
    file = -1
    for line in output.splitlines():
        if _FILE_START.match(line):
            file += 1
            continue
        match = _LANDED.match(line.strip())
        if match and file >= 0:
            number, at, fuzz, offset = match.groups()
            found.append(Landing(file, int(number), int(at), int(fuzz or 0), int(offset or 0)))
    return tuple(found)


def describe_moves(files: Sequence[FilePatch], landings: Sequence[Landing]) -> tuple[str, ...]:
    """`rows.py hunk 1: fuzz 1, offset 3 lines` for every hunk that moved."""
    notes: list[str] = []
    for landing in landings:
        how = describe_move(landing)
        if how:
            name = _section_name(files, landing.file)
            notes.append(f"{name} hunk {landing.hunk}: {how}")
    return tuple(notes)


def describe_move(landing: Landing | None) -> str:
    """`fuzz 1, offset 3 lines`; "" for a hunk that did not move."""
    if landing is None:
        return ""
    parts = [f"fuzz {landing.fuzz}"] if landing.fuzz else []
    if landing.offset:
        parts.append(f"offset {landing.offset} line{'' if abs(landing.offset) == 1 else 's'}")
    return ", ".join(parts)


def _section_name(files: Sequence[FilePatch], index: int) -> str:
    path = files[index].path if index < len(files) else None
    return path if path is not None else f"file #{index + 1}"


def read_file_patches(text: str) -> tuple[FilePatch, ...]:
    """The file sections of a unified diff, in order, with their hunks."""
    sections: list[tuple[str | None, list[Hunk]]] = []
    lines = text.split("\n")
    index = 0
    fresh = False  # the current section began at `diff --git` and has no names yet
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            sections.append((None, []))
            fresh = True
        elif _is_name_pair(lines, index):
            path = _new_name(lines[index + 1][4:])
            if fresh:
                sections[-1] = (path, sections[-1][1])
            else:
                sections.append((path, []))
            fresh = False
            index += 1
        elif _HUNK.match(line) and sections:
            hunk, index = _read_hunk(lines, index, len(sections[-1][1]) + 1)
            sections[-1][1].append(hunk)
            fresh = False
            continue
        index += 1
    return tuple(FilePatch(path, tuple(hunks)) for path, hunks in sections)


def _is_name_pair(lines: Sequence[str], index: int) -> bool:
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )


def _new_name(rest: str) -> str | None:
    """The `+++` name as `-p1` reads it: quotes undone, a tab-separated timestamp dropped."""
    name = rest.split("\t")[0].rstrip("\r")
    unquoted = unquote_c(name)
    name = unquoted if unquoted is not None else name.rstrip(" ")
    if name == "/dev/null":
        return None
    return strip_first(name) or None


def _read_hunk(lines: Sequence[str], index: int, number: int) -> tuple[Hunk, int]:
    """The hunk whose header is `lines[index]`, and the index just after its body."""
    match = _HUNK.match(lines[index])
    assert match is not None
    old_left = int(match.group(2) if match.group(2) is not None else 1)
    new_left = int(match.group(4) if match.group(4) is not None else 1)
    new_lines: list[str] = []
    added: list[int] = []
    index += 1
    for tag, body in _body(lines, index):
        if old_left <= 0 and new_left <= 0:
            break
        index += 1
        if tag in (" ", "+"):
            if tag == "+":
                added.append(len(new_lines))
            new_lines.append(body)
            new_left -= 1
        if tag in (" ", "-"):
            old_left -= 1
    hunk = Hunk(number, int(match.group(3)), match.group(5).strip(), tuple(new_lines), tuple(added))
    return hunk, index


def _body(lines: Sequence[str], index: int) -> Iterator[tuple[str, str]]:
    """(tag, text) for each line of a hunk body from `index`; stops at a line that is not one.

    An empty line counts as empty context (mail and editors strip the blank), and `\\ No
    newline at end of file` as a line that counts on neither side.
    """
    for line in lines[index:]:
        tag = line[:1]
        if tag not in ("", " ", "+", "-", "\\"):
            return
        yield tag or " ", line[1:].rstrip("\r")
