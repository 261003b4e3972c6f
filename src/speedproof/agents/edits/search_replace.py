"""SEARCH/REPLACE blocks: each search text must occur exactly once in its file.

Blocks apply in order, each to the text the blocks before it produced. An exact match comes
first. Failing that, whole lines are compared ignoring indentation and runs of blanks (models
often re-indent or retab what they copy); the replacement is then re-indented by the indentation
the file really has, and a note says the block matched only that way. Zero matches or more than
one is a rejection naming the block, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from speedproof.agents.answers import SearchReplace
from speedproof.agents.edits.files import TargetFile, TargetFiles
from speedproof.agents.edits.result import EditRejected


@dataclass(frozen=True)
class Replaced:
    """The new text of a file, and how each of its blocks matched."""

    text: str
    notes: tuple[str, ...]


def apply_blocks(
    files: TargetFiles, blocks: Sequence[SearchReplace]
) -> tuple[dict[TargetFile, tuple[str, str]], tuple[str, ...]]:
    """(old text, new text) per file touched, with the blocks applied in order, and the notes."""
    texts: dict[TargetFile, tuple[str, str]] = {}
    notes: list[str] = []
    for number, block in enumerate(blocks, start=1):
        file = files.locate(block.file)
        if file in texts:
            old, current = texts[file]
        else:
            old = current = files.read(file)
        replaced = replace_once(current, block, number)
        texts[file] = (old, replaced.text)
        notes.extend(replaced.notes)
    return texts, tuple(notes)


def replace_once(text: str, block: SearchReplace, number: int) -> Replaced:
    """`text` with the block's search text replaced; EditRejected when it is not found once."""
    where = f"block {number} ({block.file})"
    first = text.find(block.search)
    if first >= 0:
        if text.find(block.search, first + 1) >= 0:
            raise EditRejected(
                "search-ambiguous",
                f"{where}: the search text occurs more than once; include more lines around it",
            )
        end = first + len(block.search)
        return Replaced(text[:first] + block.replace + text[end:], ())
    lines = text.splitlines(keepends=True)
    wanted = _keys(_split(block.search))
    starts = [
        index
        for index in range(len(lines) - len(wanted) + 1)
        if _keys(lines[index : index + len(wanted)]) == wanted
    ]
    if not starts or not any(wanted):
        raise EditRejected(
            "search-not-found",
            f"{where}: the search text is not in the file, not even ignoring whitespace; "
            f"copy it exactly (first line: {_split(block.search)[0].strip()!r})",
        )
    if len(starts) > 1:
        raise EditRejected(
            "search-ambiguous",
            f"{where}: the search text matches {len(starts)} places when whitespace is ignored; "
            "include more lines around it",
        )
    start, stop = starts[0], starts[0] + len(wanted)
    replacement = _reindent(_split(block.search), lines[start:stop], _split(block.replace))
    ending = "\n" if lines[stop - 1].endswith("\n") else ""
    new = "".join(lines[:start]) + "\n".join(replacement) + ending + "".join(lines[stop:])
    note = f"{where} matched at line {start + 1} only when whitespace was ignored"
    return Replaced(new, (note,))


def _split(text: str) -> list[str]:
    """Lines without their ends; one final newline does not make an extra empty line."""
    return text.removesuffix("\n").split("\n")


def _keys(lines: Sequence[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines]


def _indent(lines: Sequence[str]) -> str:
    for line in lines:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


def _reindent(search: list[str], found: Sequence[str], replace: list[str]) -> list[str]:
    """Swap the search text's base indentation for the file's in every replacement line."""
    theirs, ours = _indent(search), _indent(found)
    out = []
    for line in replace:
        if not line.strip():
            out.append("")
        elif line.startswith(theirs):
            out.append(ours + line[len(theirs) :])
        else:
            out.append(line)
    return out
