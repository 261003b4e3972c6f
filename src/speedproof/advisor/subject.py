"""What a question is asked about: one function (a cause question), or one function and a
candidate diff of it (a hazard question), with a digest that keys cached answers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace

from speedproof.discovery import HotFunction
from speedproof.source.function import Language, SourceFunction, language_of, split_lines


@dataclass(frozen=True)
class Subject(SourceFunction):
    """The advisor's digested subject of a question: the function as the source readers read it
    and, for a hazard question, the candidate `diff` of it. `source` is the function exactly as
    the model sees it; `file_text` (never shown, never digested) is the whole file when known,
    which code may read to overrule an answer: a method's receiver fields say whether a write
    reaches a real stream (`vetoes`)."""

    diff: str | None = None

    @classmethod
    def of(
        cls,
        language: Language,
        name: str,
        source: str,
        diff: str | None = None,
        *,
        start_line: int = 1,
        file_text: str | None = None,
    ) -> Subject:
        """A subject known by its text alone (no file name, or none that matters); its span is
        as long as its text."""
        end_line = start_line + max(len(split_lines(source)), 1) - 1
        return cls(name, "", language, source, start_line, end_line, file_text, diff)

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
        return replace(self, diff=diff)


def subject_of(hot: HotFunction, *, file_text: str | None = None) -> Subject:
    """The subject of a hot function; a file of a language the advisor does not read is a
    ValueError."""
    language = language_of(hot.file)
    return Subject(
        hot.name, hot.file, language, hot.source, hot.start_line, hot.end_line, file_text
    )
