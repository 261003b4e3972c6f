"""Structural detectors of behaviour hazards in a candidate diff, for either language.

Each looks at what the diff removes and adds (token counts on the changed lines) for a change
that commonly alters behaviour while looking like a pure speedup. A difference in a count is
evidence, not proof: the gate (`gates`) compares the resulting probability with how often the
same detector fires on the reference set's genuine fixes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from speedproof.advisor.sites import Evidence
from speedproof.advisor.subject import Subject

DEFER_DROPS = re.compile(r"^\s*defer\s+[\w.]+\.(Flush|Close|Sync)\(\)\s*$")
DISCARDS = re.compile(r"\b_\s*=\s*[\w.]+\.(Flush|Close|Sync|Write\w*)\(|\b_\s*=\s*err\b")
SWALLOWS = re.compile(r"^\s*except\b[^:]*:\s*pass\b|\bcontextlib\.suppress\(|\bsuppress\(")
ERR_CHECK = re.compile(r"\berr\s*!=\s*nil\b")
FLUSHES = re.compile(r"\.(Flush|flush|Close|close|Sync)\(\)")
BUFFERING = re.compile(r"bufio\.NewWriter|io\.BufferedWriter|buffering\s*=|\bStringIO\(\)")
SORTING = re.compile(
    r"\bsorted\(|\.sort\(|\bsort\.(?:Slice|SliceStable|Sort|Stable|Strings|Ints)\("
    r"|\bslices\.Sort\w*\("
)
# A set whose items are iterated or listed (order lost), or a goroutine (order up to the
# scheduler). A set used only for membership keeps every output's order, so it is not counted.
UNORDERED = re.compile(
    r"(?:list|tuple|sorted|join|enumerate)\(\s*(?:set|frozenset)\(|\bin\s+(?:set|frozenset)\("
    r"|\bgo\s+func\b|^\s*go\s+\w"
)
ROUNDING = re.compile(
    r"\bround\(|math\.(?:Round|Floor|Ceil|Trunc)\b|math\.(?:floor|ceil|trunc)\(|\bint\("
    r"|\bfloat(?:32|64)\(|//|%[-+ 0#]*\d*\.\d+[fFeEgG]|:[<>^=]?[-+ ]?\d*\.\d+[fFeEgG%]"
)
REUSE = re.compile(
    r"\[:0\]|\.Reset\(\)|\bsync\.Pool\b|\.clear\(\)|\bdel\s+\w+\[:\]|\bunsafe\.(?:String|Slice)\("
)
ERROR_PATHS = re.compile(
    r"\breturn\b[^\n]*\berr\b|\braise\b|\bpanic\(|\berrors\.New\(|fmt\.Errorf\(|\bexcept\b"
)
EXITS = re.compile(r"\bos\.Exit\(|\blog\.Fatal\w*\(|\bsys\.exit\(|\bos\._exit\(|\bpanic\(")
LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|`[^`]*`|\'(?:\\.|[^\'\\])*\'')
VERBS_ONLY = re.compile(r"^(?:%[-+ 0#]*\d*(?:\.\d+)?[a-zA-Z])*$")


@dataclass(frozen=True)
class DiffLines:
    removed: list[str]
    added: list[str]

    def count(self, pattern: re.Pattern[str], side: str) -> int:
        lines = self.removed if side == "removed" else self.added
        return sum(len(pattern.findall(line)) for line in lines)

    def tokens(self, pattern: re.Pattern[str], side: str) -> Counter[str]:
        lines = self.removed if side == "removed" else self.added
        return Counter(token for line in lines for token in pattern.findall(line))


def changed_lines(diff: str) -> DiffLines:
    removed, added = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
    return DiffLines(removed, added)


def _differ(name: str, d: DiffLines, pattern: re.Pattern[str]) -> list[Evidence]:
    before, after = d.tokens(pattern, "removed"), d.tokens(pattern, "added")
    if before == after:
        return []
    gone = sorted((before - after).elements())
    new = sorted((after - before).elements())
    return [Evidence(f"{name} changed: removed {gone or 'nothing'}, added {new or 'nothing'}")]


def ignored_error(d: DiffLines, subject: Subject) -> list[Evidence]:
    found = [
        Evidence(f"`{line.strip()}` discards the error")
        for line in d.added
        if DEFER_DROPS.match(line)
    ]
    found += [
        Evidence(f"`{line.strip()}` discards the error")
        for line in d.added
        if DISCARDS.search(line)
    ]
    found += [
        Evidence(f"`{line.strip()}` swallows exceptions")
        for line in d.added
        if SWALLOWS.search(line)
    ]
    if d.count(ERR_CHECK, "removed") > d.count(ERR_CHECK, "added"):
        found.append(Evidence("an `err != nil` check is removed", 0.7))
    return found


def dropped_flush(d: DiffLines, subject: Subject) -> list[Evidence]:
    found = []
    if d.count(FLUSHES, "removed") > d.count(FLUSHES, "added"):
        found.append(Evidence("a Flush/Close/Sync call is removed"))
    if d.count(BUFFERING, "added") > d.count(BUFFERING, "removed") and not d.count(
        FLUSHES, "added"
    ):
        found.append(Evidence("a new buffer is introduced and nothing in the change flushes it"))
    return found


def changed_ordering(d: DiffLines, subject: Subject) -> list[Evidence]:
    found = _differ("sorting", d, SORTING)
    before, after = d.tokens(SORTING, "removed"), d.tokens(SORTING, "added")
    if found and not (before and after):
        # A sort only removed (or only added) may have ordered nothing that is written, as in
        # sorted(xs)[0] -> min(xs); a sort replaced by another is the direct case.
        found = [Evidence(found[0].text, 0.6)]
    if d.count(UNORDERED, "added") > d.count(UNORDERED, "removed"):
        found.append(Evidence("the change adds a set or a goroutine, which has no order", 0.7))
    return found


def changed_rounding(d: DiffLines, subject: Subject) -> list[Evidence]:
    return _differ("rounding and number formatting", d, ROUNDING)


def shared_buffer(d: DiffLines, subject: Subject) -> list[Evidence]:
    return [
        Evidence(f"`{line.strip()[:50]}` reuses storage", 0.7)
        for line in d.added
        if REUSE.search(line)
    ]


def changed_error_path(d: DiffLines, subject: Subject) -> list[Evidence]:
    if d.count(ERROR_PATHS, "removed") > d.count(ERROR_PATHS, "added"):
        return [Evidence("an error return, raise or panic is removed")]
    if d.count(ERROR_PATHS, "added") > d.count(ERROR_PATHS, "removed"):
        return [Evidence("an error return, raise or panic is added", 0.5)]
    return []


def _literals(lines: list[str]) -> Counter[str]:
    found: Counter[str] = Counter()
    for line in lines:
        for token in LITERAL.findall(line):
            if not VERBS_ONLY.match(token[1:-1]):
                found[token] += 1
    return found


def changed_text(d: DiffLines, subject: Subject) -> list[Evidence]:
    before, after = _literals(d.removed), _literals(d.added)
    if before == after:
        return []
    gone = sorted((before - after).elements())[:3]
    new = sorted((after - before).elements())[:3]
    return [
        Evidence(f"string literals differ: removed {gone or 'none'}, added {new or 'none'}", 0.7)
    ]


def changed_exit(d: DiffLines, subject: Subject) -> list[Evidence]:
    found = _differ("exits", d, EXITS)
    defers = sum(1 for line in d.added if re.match(r"^\s*defer\b", line))
    if defers and EXITS.search(subject.source):
        found.append(Evidence("a deferred call is added to a function that can exit the process"))
    return found


DETECTORS: dict[str, Callable[[DiffLines, Subject], list[Evidence]]] = {
    "ignored_error": ignored_error,
    "dropped_flush": dropped_flush,
    "changed_ordering": changed_ordering,
    "changed_rounding": changed_rounding,
    "shared_buffer": shared_buffer,
    "changed_error_path": changed_error_path,
    "changed_text": changed_text,
    "changed_exit": changed_exit,
}
