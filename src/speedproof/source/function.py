"""One function as the target's source has it: its qualified name, its file, its 1-based
inclusive line span, its text, and the whole file's text when a reader was given it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Literal

Language = Literal["python", "go"]
LANGUAGES: tuple[Language, ...] = ("python", "go")
_SUFFIXES: dict[str, Language] = {".py": "python", ".go": "go"}
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def language_of(path: str) -> Language:
    """The language of a source file by its suffix; anything else is a ValueError."""
    found = _SUFFIXES.get(PurePosixPath(path).suffix)
    if found is None:
        raise ValueError(f"{path}: the source readers read .py and .go functions only")
    return found


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only, as `ast` and tree-sitter count them."""
    return _LINE.findall(text)


def lines_of(text: str, start: int, end: int) -> str:
    """Lines `start` to `end` (1-based, inclusive) of `text`, endings kept."""
    return "".join(split_lines(text)[start - 1 : end])


@dataclass(frozen=True)
class SourceFunction:
    """A top-level function or method: `name` qualified the way the language's profiler writes
    it (`textstat.words.is_stopword`, `main.(*stats).addLine`), `file` relative to the target
    folder, `source` exactly lines `start_line`..`end_line` of the file (so a replacement can be
    spliced back by lines), and `file_text` the whole file when the reader was given it."""

    name: str
    file: str
    language: Language
    source: str
    start_line: int
    end_line: int
    file_text: str | None = None

    @property
    def bare_name(self) -> str:
        """`textstat.words.is_stopword` -> `is_stopword`; `main.(*stats).addLine` -> `addLine`."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def name_parts(self) -> tuple[str, ...]:
        return tuple(part for part in self.name.split(".") if part)

    def without_file(self) -> SourceFunction:
        return replace(self, file_text=None)

    def with_file(self, file_text: str | None) -> SourceFunction:
        return replace(self, file_text=file_text)
