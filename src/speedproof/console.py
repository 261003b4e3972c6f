"""The console a command prints its report on (stdout): a terminal's width, or room in a pipe.

Rich sizes a console that is not a terminal at 80 columns (or the size of a terminal on stdin,
or COLUMNS), and fits a table into that by cutting its cells: the ledger's eight columns came out
as "propose…", "access…", "rests / on". A pipe or a file has no width to keep to, and whoever
greps it or reads it in a CI log needs each cell whole; a table never grows wider than its cells,
so a wide console costs nothing.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

# Room for any table a command prints (the ledger's list of 8 columns with 60-character names is
# about 200) while a line that is not a table still ends somewhere.
PIPE_WIDTH = 10_000


def report_console(*, highlight: bool = True, least_width: int = 0) -> Console:
    """Stdout's console: a terminal's own width (at least `least_width`, for a report laid out
    for that many columns), else PIPE_WIDTH columns."""
    console = Console(highlight=highlight)
    if not console.is_terminal:
        return Console(highlight=highlight, width=PIPE_WIDTH)
    if console.width < least_width:
        return Console(highlight=highlight, width=least_width)
    return console


def stage_line(stage: str, message: str) -> str:
    """A progress line, `stage: message`, with the message as text: a verdict's words name
    settings as `[policy] max_measure_s`, which rich would otherwise read as markup."""
    return f"[dim]{stage}:[/] {escape(message)}"


def listed(text: str, prefix: str = "  - ") -> str:
    """One reason or note of a verdict as a list line, its words as text (see `stage_line`)."""
    return f"{prefix}{escape(text)}"
