"""What turning an optimizer answer into a patch gives: a patch, or a rejection with a named kind.

The kinds are a fixed vocabulary so the ledger can count why answers fail (a model that keeps
writing search text that is not in the file needs a different prompt from one whose Go does not
parse); every message says what to fix, because it is quoted back to the optimizer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from speedproof.ground.errors import SpeedproofError

RejectKind = Literal[
    "file-missing",  # the named file is not in the target folder at the base revision
    "outside-target",  # the path is absolute, climbs out with `..` or leaves through a link
    "path-unsupported",  # a name a patch header cannot carry unquoted (control characters)
    "unsupported-language",  # no function splicer for this file or target language
    "function-not-found",  # no function or method of that name
    "function-ambiguous",  # several functions match the name
    "function-mismatch",  # the new source does not define exactly that one function
    "syntax-error",  # the new source, preamble or resulting file does not parse
    "import-invalid",  # an `imports` entry is not an import statement or an import path
    "search-not-found",  # a search text occurs nowhere, not even ignoring whitespace
    "search-ambiguous",  # a search text occurs more than once
    "diff-malformed",  # the diff has no usable file sections, or renames/deletes/binary parts
    "diff-does-not-apply",  # `git apply --check` refuses the diff at the base revision
    "no-change",  # the answer leaves every file as it was
    "line-ends-unsupported",  # a changed file has CRLF line ends, which patch normalising drops
]

EditKind = Literal["function", "search_replace", "diff"]


class EditRejected(SpeedproofError):
    """An optimizer answer that cannot become a patch; `kind` says which rule it broke."""

    def __init__(self, kind: RejectKind, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind: RejectKind = kind
        self.detail = message


@dataclass(frozen=True)
class EditResult:
    """A normalised, repository-relative unified diff (a/ b/ paths, as `git diff` writes them),
    the repository-relative files it changes, the answer's kind, and notes on how it was made
    (a search text matched only when whitespace was ignored, say)."""

    patch: str
    files: tuple[str, ...]
    kind: EditKind
    notes: tuple[str, ...] = ()
