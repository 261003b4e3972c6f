"""Structural hazard checks on a candidate diff: the reviewer role of the heuristic proposer.

Each check looks at what a diff removes and adds (and, for sorting, at the hunk around it) for
a change that commonly alters output while looking like a pure speedup. A concern is advice:
it is recorded and shown to the next proposal, and never reaches the verdict. Any high-severity
concern makes the recommendation "reconsider".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from speedproof.agents.answers import Concern, ReviewerAnswer

ROUNDING = re.compile(
    r"\bround\(|math\.(?:Round|Floor|Ceil|Trunc)\b|math\.(?:floor|ceil|trunc)\(|\bint\("
    r"|%[-+ 0#]*\d*\.\d+[fFeEgG]|:[<>^=]?[-+ ]?\d*\.\d+[fFeEgG%]"
)
NORMALISING = re.compile(
    r"\.(?:lower|upper|casefold|strip|lstrip|rstrip|title)\(|strings\.(?:ToLower|ToUpper"
    r"|TrimSpace|Trim|TrimRight|TrimLeft|Title|EqualFold)\("
)
ZONES = re.compile(r"\.UTC\(\)|\.Local\(\)|\.In\(|time\.Local\b|tzinfo|astimezone\(|timezone\.")
SORTING = re.compile(r"\bsorted\(|\.sort\(|\bsort\.\w+\(|slices\.Sort\w*\(")
# A sort's less function compares two elements by index: `a[i].x < a[j].x`.
COMPARATOR = re.compile(r"return .*\[i\].*\[j\]|key=lambda")
EXITS = re.compile(r"\bos\.Exit\(|\blog\.Fatal\w*\(|\bsys\.exit\(|\bos\._exit\(")


@dataclass
class Hunk:
    context: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass
class DiffView:
    """The changed lines of a unified diff, overall and hunk by hunk."""

    hunks: list[Hunk]

    @property
    def removed(self) -> list[str]:
        return [line for hunk in self.hunks for line in hunk.removed]

    @property
    def added(self) -> list[str]:
        return [line for hunk in self.hunks for line in hunk.added]

    def count(self, pattern: re.Pattern[str] | str, side: str) -> int:
        lines = self.removed if side == "removed" else self.added
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        return sum(len(regex.findall(line)) for line in lines)

    def tokens(self, pattern: re.Pattern[str], side: str) -> list[str]:
        lines = self.removed if side == "removed" else self.added
        return sorted(token for line in lines for token in pattern.findall(line))


def read_diff(diff: str) -> DiffView:
    hunks: list[Hunk] = []
    current: Hunk | None = None
    for line in diff.splitlines():
        if line.startswith("@@"):
            current = Hunk()
            hunks.append(current)
        elif current is None or line.startswith(("--- ", "+++ ", "diff ", "index ")):
            continue
        elif line.startswith("-"):
            current.removed.append(line[1:])
        elif line.startswith("+"):
            current.added.append(line[1:])
        elif line.startswith(" "):
            current.context.append(line[1:])
    return DiffView(hunks)


def _flush_removed(view: DiffView) -> Concern | None:
    if view.count(".Flush(", "removed") > view.count(".Flush(", "added"):
        return Concern(severity="high", text="a Flush call is removed: buffered output may be lost")
    return None


def _buffer_without_flush(view: DiffView) -> Concern | None:
    buffers = view.count(re.compile(r"bufio\.NewWriter|io\.BufferedWriter"), "added")
    if buffers and not view.count(".Flush(", "added"):
        return Concern(
            severity="high",
            text="a buffered writer is added without a Flush: the tail of the output may be lost",
        )
    return None


def _exit_with_buffer(view: DiffView) -> Concern | None:
    buffered = view.count(re.compile(r"bufio\.NewWriter|defer \w+\.Flush"), "added")
    if buffered and (
        view.count(EXITS, "added") or any(EXITS.search(c) for h in view.hunks for c in h.context)
    ):
        return Concern(
            severity="high",
            text="output is buffered in a function that exits the process: deferred Flush "
            "calls do not run on os.Exit or log.Fatal",
        )
    return None


def _error_checks_removed(view: DiffView) -> Concern | None:
    checks = re.compile(r"if err != nil|\bexcept\b|\braise\b|return .*err\b")
    if view.count(checks, "removed") > view.count(checks, "added"):
        return Concern(
            severity="high",
            text="error handling is removed (an err check, an except or a raise): failures "
            "that were reported may now pass silently",
        )
    return None


def _sort_changed(view: DiffView) -> Concern | None:
    if view.count("SliceStable", "removed") > view.count("SliceStable", "added"):
        return Concern(
            severity="high",
            text="a stable sort becomes unstable: equal elements may come out in another order",
        )
    if view.tokens(SORTING, "removed") != view.tokens(SORTING, "added"):
        if view.count(re.compile(r"\bmax\("), "added") and not view.count("reversed(", "added"):
            return Concern(
                severity="high",
                text="sorting is replaced by max(): max returns the first of equal largest "
                "items, where sorted(...)[-1] returned the last",
            )
        return Concern(
            severity="medium",
            text="a sort is added, removed or changed: check that ties and keys still order "
            "elements the same way",
        )
    for hunk in view.hunks:
        near_sort = any(SORTING.search(line) for line in hunk.context + hunk.removed)
        changed = [line for line in hunk.removed + hunk.added if "return" in line or "key=" in line]
        comparator = [line for line in changed if COMPARATOR.search(line)]
        if hunk.removed and ((near_sort and changed) or comparator):
            return Concern(
                severity="high",
                text="the comparison inside a sort changes: the order (or the tie-break) of "
                "the sorted output may differ",
            )
    return None


def _tokens_changed(
    pattern: re.Pattern[str], severity: str, text: str
) -> Callable[[DiffView], Concern | None]:
    def check(view: DiffView) -> Concern | None:
        if view.tokens(pattern, "removed") != view.tokens(pattern, "added"):
            return Concern(severity=severity, text=text)  # type: ignore[arg-type]
        return None

    return check


def _goroutines(view: DiffView) -> Concern | None:
    if view.count(re.compile(r"^\s*go \w|\bgo func\("), "added"):
        return Concern(
            severity="medium",
            text="goroutines are added: output written from them may interleave differently",
        )
    return None


def _set_order(view: DiffView) -> Concern | None:
    if view.count(re.compile(r"\b(?:frozen)?set\(|map\["), "added") > view.count(
        re.compile(r"\b(?:frozen)?set\(|map\["), "removed"
    ):
        return Concern(
            severity="low",
            text="a set or map replaces an ordered collection: anything that iterates it now "
            "sees an arbitrary order",
        )
    return None


CHECKS: tuple[Callable[[DiffView], Concern | None], ...] = (
    _flush_removed,
    _buffer_without_flush,
    _exit_with_buffer,
    _error_checks_removed,
    _sort_changed,
    _tokens_changed(
        ZONES, "high", "a time zone conversion is added or removed: times may print differently"
    ),
    _tokens_changed(
        ROUNDING, "medium", "rounding, truncation or a number format changes: figures may differ"
    ),
    _tokens_changed(
        NORMALISING, "medium", "text normalisation (case, whitespace) changes: strings may differ"
    ),
    _goroutines,
    _set_order,
)


def review(diff: str) -> ReviewerAnswer:
    view = read_diff(diff)
    concerns = [concern for check in CHECKS if (concern := check(view)) is not None]
    high = any(concern.severity == "high" for concern in concerns)
    return ReviewerAnswer(concerns=concerns, recommendation="reconsider" if high else "proceed")
