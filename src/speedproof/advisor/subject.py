"""What a question is asked about: one function (a cause question), or one function and a
candidate diff of it (a hazard question), with a digest that keys cached answers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from speedproof.discovery import HotFunction

Language = Literal["python", "go"]
LANGUAGES: tuple[Language, ...] = ("python", "go")
_SUFFIXES: dict[str, Language] = {".py": "python", ".go": "go"}


@dataclass(frozen=True)
class Subject:
    """`source` is the function exactly as the model sees it; `file_text` (never shown, never
    digested) is the whole file when known, which code may read to overrule an answer: a
    method's receiver fields say whether a write reaches a real stream (`vetoes`)."""

    language: Language
    name: str
    source: str
    diff: str | None = None
    start_line: int = 1
    file_text: str | None = None

    @property
    def digest(self) -> str:
        """sha256 of what the model is shown: language, name, source and diff."""
        shown = {
            "language": self.language,
            "name": self.name,
            "source": self.source,
            "diff": self.diff,
        }
        text = json.dumps(shown, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def with_diff(self, diff: str) -> Subject:
        return Subject(self.language, self.name, self.source, diff, self.start_line, self.file_text)


def language_of(path: str) -> Language:
    """The language of a source file by its suffix; anything else is a ValueError."""
    found = _SUFFIXES.get(PurePosixPath(path).suffix)
    if found is None:
        raise ValueError(f"{path}: the advisor reads .py and .go functions only")
    return found


def subject_of(hot: HotFunction, *, file_text: str | None = None) -> Subject:
    return Subject(
        language=language_of(hot.file),
        name=hot.name,
        source=hot.source,
        start_line=hot.start_line,
        file_text=file_text,
    )
