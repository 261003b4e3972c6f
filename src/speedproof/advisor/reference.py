"""The shipped reference set: the functions whose answers calibrate every question.

`reference/functions.json` holds small single-function performance fixes and cause-free
functions written for the set (a `before`, and for a fix an `after`, whose diff the hazard
questions are asked about), plus slow reference functions sampled from the function-mode corpus
v1. Cause questions are asked of every item's `before`; hazard questions of every fix's diff.
`shows` and `hazards` say what an item was written or chosen to show: they document the set
and are never read by calibration.

The digest is sha256 over the items as canonical JSON, so reformatting the file keeps it and
any change to an item's text changes it (and refuses every baseline measured before).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from speedproof.advisor.errors import ReferenceSetError
from speedproof.advisor.subject import Subject
from speedproof.source.function import LANGUAGES, Language

REFERENCE_PACKAGE = "speedproof.advisor"
REFERENCE_FILE = "reference/functions.json"
Origin = Literal["written", "corpus"]


@dataclass(frozen=True)
class ReferenceItem:
    id: str
    language: Language
    name: str
    origin: Origin
    provenance: str
    shows: tuple[str, ...]
    hazards: tuple[str, ...]
    before: str
    after: str | None = None
    file: str | None = None

    @property
    def subject(self) -> Subject:
        """The `before` function, as a cause question sees it."""
        return Subject.of(self.language, self.name, self.before, file_text=self.file)

    @cached_property
    def diff(self) -> str | None:
        if self.after is None:
            return None
        path = f"{self.name.rsplit('.', 1)[0].replace('.', '/')}.{_SUFFIX[self.language]}"
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
        return "".join(lines)

    @property
    def hazard_subject(self) -> Subject | None:
        """The fix as a hazard question sees it: the `before` function and the diff."""
        return None if self.diff is None else self.subject.with_diff(self.diff)


_SUFFIX = {"python": "py", "go": "go"}


@dataclass(frozen=True)
class ReferenceSet:
    items: tuple[ReferenceItem, ...]
    digest: str

    @property
    def fixes(self) -> tuple[ReferenceItem, ...]:
        return tuple(item for item in self.items if item.after is not None)

    def by_id(self) -> dict[str, ReferenceItem]:
        return {item.id: item for item in self.items}


def _text(value: Any, where: str) -> str:
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise ReferenceSetError(f"{where} must be a list of lines")
    return "\n".join(value) + "\n"


def _item(raw: Any, index: int) -> ReferenceItem:
    if not isinstance(raw, dict):
        raise ReferenceSetError(f"reference item {index} is not an object")
    where = f"reference item {raw.get('id', index)!r}"
    try:
        language = raw["language"]
        if language not in LANGUAGES or raw["origin"] not in ("written", "corpus"):
            raise ReferenceSetError(f"{where}: unknown language or origin")
        after = raw.get("after")
        file = raw.get("file")
        return ReferenceItem(
            id=str(raw["id"]),
            language=cast(Language, language),
            name=str(raw["name"]),
            origin=cast(Origin, raw["origin"]),
            provenance=str(raw["provenance"]),
            shows=tuple(raw["shows"]),
            hazards=tuple(raw["hazards"]),
            before=_text(raw["before"], f"{where} before"),
            after=None if after is None else _text(after, f"{where} after"),
            file=None if file is None else _text(file, f"{where} file"),
        )
    except KeyError as err:
        raise ReferenceSetError(f"{where} lacks {err.args[0]!r}") from err


def digest_of(items: list[Any]) -> str:
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_reference(path: Path | None = None) -> ReferenceSet:
    """The reference set at `path`, or the shipped one."""
    try:
        if path is None:
            text = resources.files(REFERENCE_PACKAGE).joinpath(REFERENCE_FILE).read_text("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
        document = json.loads(text)
    except (OSError, json.JSONDecodeError) as err:
        raise ReferenceSetError(f"the advisor's reference set cannot be read: {err}") from err
    raw_items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(raw_items, list) or not raw_items:
        raise ReferenceSetError("the advisor's reference set has no items")
    items = tuple(_item(raw, index) for index, raw in enumerate(raw_items))
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ReferenceSetError("the advisor's reference set repeats an item id")
    return ReferenceSet(items, digest_of(raw_items))
