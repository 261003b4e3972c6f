"""One construct in a candidate's added code that the guard refuses, and where it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CodeRule = Literal["harness-probe", "harness-plugin", "code-as-data", "unparsable-code"]

# A finding quotes its construct, cut to this many characters: enough to recognise it.
QUOTED = 100


@dataclass(frozen=True)
class Finding:
    """`rule` at `line` (1-based) of a file, quoting the construct (`testing.Testing()`)."""

    rule: CodeRule
    line: int
    end_line: int
    quote: str


def quote(text: str) -> str:
    """`text` on one line, blanks squeezed, cut to `QUOTED` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= QUOTED else flat[: QUOTED - 1] + "…"


def one_per_line(findings: list[Finding]) -> list[Finding]:
    """The first finding of each rule on each line: one construct is often found twice (an
    import and its use, a call and its argument), and one reason a line is enough."""
    kept: dict[tuple[str, int], Finding] = {}
    for finding in findings:
        kept.setdefault((finding.rule, finding.line), finding)
    return sorted(kept.values(), key=lambda f: (f.line, f.rule))
