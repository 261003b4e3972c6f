"""The Markdown report: the same data as the HTML page, as tables and fenced diffs.

Text from the ledger (reasons, hypotheses, concerns, test output) is escaped so that it reads
as written: a `|` cannot split a table cell and a `<script>` is shown, not passed through as raw
HTML by a renderer. A diff goes into a fence longer than any run of backticks inside it.
"""

from __future__ import annotations

import re

from speedproof.report.environment import environment
from speedproof.report.model import ReportData

TEMPLATE = "report.md.j2"
# CommonMark lets a backslash escape any ASCII punctuation; these are the characters that would
# otherwise start markup inside a table cell or a line of prose.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def cell(value: object) -> str:
    """One line of escaped text: newlines become spaces so a table row stays one row."""
    text = " ".join(str(value).split())
    return _SPECIAL.sub(r"\\\1", text)


def fence(text: str) -> str:
    """Backticks enough to fence `text`: one more than its longest run, at least three."""
    runs = [len(run) for run in re.findall(r"`+", text)]
    return "`" * max(3, max(runs, default=0) + 1)


def code(value: object) -> str:
    """A code span around one line of text, with backticks enough for those inside it.

    A `|` is escaped even inside the span: a GitHub table splits cells on it before it reads
    code spans, and drops the backslash when it renders the cell.
    """
    text = " ".join(str(value).split()).replace("|", "\\|")
    runs = [len(run) for run in re.findall(r"`+", text)]
    ticks = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_markdown(data: ReportData) -> str:
    env = environment(html=False)
    env.filters["cell"] = cell
    env.filters["fence"] = fence
    env.filters["code"] = code
    return env.get_template(TEMPLATE).render(data=data)
