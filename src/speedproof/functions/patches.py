"""Apply a model's edit to a function: SEARCH/REPLACE blocks or a unified diff, all or nothing.

SEARCH/REPLACE blocks look like

    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

and text between blocks (a model's prose, code fences) is ignored. A unified diff's hunks become
blocks whose SEARCH is the context and removed lines, with the hunk's start line as a hint.

Each block is applied to the text the previous blocks produced: an exact unique match of its
lines first; then a whitespace-tolerant unique match (trailing whitespace stripped, tabs
expanded, common indentation removed), whose replacement is re-indented by the difference in
indentation. Every failure is named: patch_malformed, patch_not_found, patch_ambiguous,
patch_noop (the result parses to the same AST), patch_too_large (more than 60 changed lines).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from typing import Literal

from speedproof.ground.errors import PatchError

MAX_CHANGED_LINES = 60

PatchCode = Literal[
    "patch_malformed", "patch_not_found", "patch_ambiguous", "patch_noop", "patch_too_large"
]

_SEARCH = re.compile(r"^<{5,}\s*SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,}\s*$")
_REPLACE = re.compile(r"^>{5,}\s*REPLACE\s*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchFailure(PatchError):
    """A named patch failure; `code` is one of PatchCode."""

    def __init__(self, code: PatchCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code: PatchCode = code


@dataclass(frozen=True)
class Block:
    """One edit: replace the lines `search` by `replace`; `hint` is a 0-based line, if known."""

    number: int
    search: tuple[str, ...]
    replace: tuple[str, ...]
    hint: int | None = None


def apply_patch(source: str, patch_text: str) -> str:
    """The source after the patch, or PatchFailure; the source itself is never half-patched."""
    lines = patch_text.splitlines()
    if any(_SEARCH.match(line.strip()) for line in lines):
        blocks = parse_search_replace(patch_text)
    elif any(_HUNK.match(line) for line in lines):
        blocks = parse_unified_diff(patch_text)
    else:
        raise PatchFailure("patch_malformed", "no SEARCH/REPLACE block and no diff hunk found")
    return apply_blocks(source, blocks)


# The marker each state waits for, and the state that marker leads to.
_NEXT: dict[str, tuple[str, str]] = {
    "outside": ("search", "search"),
    "search": ("divider", "replace"),
    "replace": ("replace", "outside"),
}
_SHOWN = {"search": "<<<<<<< SEARCH", "divider": "=======", "replace": ">>>>>>> REPLACE"}


def parse_search_replace(text: str) -> list[Block]:
    """The blocks of a SEARCH/REPLACE patch; unterminated or out-of-order markers are malformed."""
    blocks: list[Block] = []
    state = "outside"
    parts: dict[str, list[str]] = {"search": [], "replace": []}
    for number, line in enumerate(text.splitlines(), start=1):
        marker = _marker(line)
        if marker is None:
            if state != "outside":
                parts[state].append(line)
            continue
        expected, following = _NEXT[state]
        if marker != expected:
            raise PatchFailure(
                "patch_malformed",
                f"line {number}: {_SHOWN[marker]} where {_SHOWN[expected]} was expected",
            )
        if marker == "search":
            parts = {"search": [], "replace": []}
        elif marker == "replace":
            blocks.append(_block(len(blocks) + 1, parts["search"], parts["replace"], None))
        state = following
    if state != "outside":
        raise PatchFailure("patch_malformed", "the last block is not closed by >>>>>>> REPLACE")
    if not blocks:
        raise PatchFailure("patch_malformed", "no complete SEARCH/REPLACE block")
    return blocks


def _marker(line: str) -> str | None:
    stripped = line.strip()
    if _SEARCH.match(stripped):
        return "search"
    if _DIVIDER.match(stripped):
        return "divider"
    if _REPLACE.match(stripped):
        return "replace"
    return None


def _block(number: int, search: list[str], replace: list[str], hint: int | None) -> Block:
    if not any(line.strip() for line in search):
        raise PatchFailure("patch_malformed", f"block {number} has an empty SEARCH part")
    return Block(number, tuple(search), tuple(replace), hint)


def parse_unified_diff(text: str) -> list[Block]:
    """The hunks of a one-file unified diff as blocks; line counts in headers are not trusted."""
    blocks: list[Block] = []
    files = 0
    current: tuple[int, list[str], list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            files += 1
            if files > 1:
                raise PatchFailure("patch_malformed", "the diff touches more than one file")
        header = _HUNK.match(line)
        if header is not None:
            if current is not None:
                blocks.append(_block(len(blocks) + 1, current[1], current[2], current[0]))
            current = (max(int(header.group(1)) - 1, 0), [], [])
        elif current is not None:
            _hunk_line(line, current[1], current[2])
    if current is not None:
        blocks.append(_block(len(blocks) + 1, current[1], current[2], current[0]))
    if not blocks:
        raise PatchFailure("patch_malformed", "no hunk in the diff")
    return blocks


def _hunk_line(line: str, old: list[str], new: list[str]) -> None:
    if line.startswith("\\"):
        return  # "\ No newline at end of file"
    if line == "" or line.startswith(" "):
        old.append(line[1:])
        new.append(line[1:])
    elif line.startswith("-") and not line.startswith("--- "):
        old.append(line[1:])
    elif line.startswith("+") and not line.startswith("+++ "):
        new.append(line[1:])


def apply_blocks(source: str, blocks: list[Block]) -> str:
    """Apply every block in order to a copy of `source`; any failure leaves nothing applied."""
    lines = source.splitlines()
    shift = 0
    for block in blocks:
        if block.search == block.replace:
            raise PatchFailure("patch_noop", f"block {block.number} changes nothing")
        hint = None if block.hint is None else block.hint + shift
        lines = _apply_one(lines, block, hint)
        shift += len(block.replace) - len(block.search)
    result = "\n".join(lines) + ("\n" if source.endswith("\n") or not source else "")
    if result == source or _same_program(source, result):
        raise PatchFailure("patch_noop", "the patch leaves the program unchanged")
    changed = changed_lines(source, result)
    if changed > MAX_CHANGED_LINES:
        raise PatchFailure(
            "patch_too_large", f"{changed} changed lines, more than {MAX_CHANGED_LINES}"
        )
    return result


def _same_program(old: str, new: str) -> bool:
    """Only whitespace or comments changed: the two sources parse to the same AST."""
    try:
        return ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def changed_lines(old: str, new: str) -> int:
    """Lines touched: for each differing region, the larger of its removed and added counts."""
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    total = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            total += max(i2 - i1, j2 - j1)
    return total


def _apply_one(lines: list[str], block: Block, hint: int | None) -> list[str]:
    size = len(block.search)
    exact = [i for i in range(len(lines) - size + 1) if tuple(lines[i : i + size]) == block.search]
    start = _choose(exact, hint, block, "exactly")
    if start is not None:
        return [*lines[:start], *block.replace, *lines[start + size :]]
    wanted = _normalise(block.search)
    loose = [i for i in range(len(lines) - size + 1) if _normalise(lines[i : i + size]) == wanted]
    start = _choose(loose, hint, block, "after normalising whitespace")
    if start is None:
        raise PatchFailure(
            "patch_not_found", f"block {block.number}'s SEARCH text is not in the source"
        )
    delta = _indent(lines[start : start + size]) - _indent(list(block.search))
    return [*lines[:start], *_reindent(block.replace, delta), *lines[start + size :]]


def _choose(starts: list[int], hint: int | None, block: Block, how: str) -> int | None:
    if len(starts) == 1:
        return starts[0]
    if len(starts) > 1:
        if hint is not None and hint in starts:
            return hint
        raise PatchFailure(
            "patch_ambiguous",
            f"block {block.number}'s SEARCH text matches {len(starts)} places {how}",
        )
    return None


def _normalise(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    expanded = [line.expandtabs(4).rstrip() for line in lines]
    margin = min((len(line) - len(line.lstrip()) for line in expanded if line), default=0)
    return tuple(line[margin:] for line in expanded)


def _indent(lines: list[str]) -> int:
    for line in lines:
        expanded = line.expandtabs(4)
        if expanded.strip():
            return len(expanded) - len(expanded.lstrip())
    return 0


def _reindent(lines: tuple[str, ...], delta: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        expanded = line.expandtabs(4).rstrip()
        if not expanded:
            out.append("")
        elif delta >= 0:
            out.append(" " * delta + expanded)
        else:
            removable = min(-delta, len(expanded) - len(expanded.lstrip()))
            out.append(expanded[removable:])
    return out
