"""The HTML report: a page and plotly.js beside it (or inlined), nothing fetched when it opens.

plotly.js is 4.6 MB, 15 times the rest of a page with two judged candidates (0.3 MB); inlined
into every page it made report.html weigh 4.9 MB. So by default the page loads it from the
file `plotly.min.js` written beside it, which opens from disk with no network as before, and
`single_file=True` inlines it for a page sent on its own (docs/adr/0083).

The plots need plotly, which the `report` extra installs. Without it the page is written all the
same, without plots, and says so at the top and where each plot would be: a report is output, not
a verdict. Everything the verdicts rest on (readings, intervals, gates, reasons) is text drawn
from the ledger and is all there; refusing to write it, and the Markdown and JSON beside it,
would withhold the record for want of a picture of it. Fail-closed stays the rule for judging.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from speedproof.extras import MissingExtra, require
from speedproof.report.environment import environment
from speedproof.report.model import ReportData

TEMPLATE = "report.html.j2"
PLOTS_FEATURE = "drawing the HTML report's plots"


PLOTLY_FILE = "plotly.min.js"


@dataclass(frozen=True)
class HtmlPage:
    """The rendered page, the files it loads from beside it (name → text; plotly.js when it
    draws plots and is not a single file), and the one-line reason its plots were left out
    (None when drawn, or when no candidate had samples to draw)."""

    text: str
    plots_left_out: str | None = None
    beside: dict[str, str] = field(default_factory=dict)


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with the CSS class that colours it."""
    found = []
    for line in diff.splitlines():
        if line.startswith(("diff ", "--- ", "+++ ", "index ", "new file", "deleted file")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        found.append((kind, line))
    return found


def has_samples(data: ReportData) -> bool:
    """Whether any candidate has samples, i.e. whether the page has a plot to draw."""
    return any(c.distributions for campaign in data.campaigns for c in campaign.candidates)


def plots(data: ReportData) -> dict[int, Markup]:
    """Each measured candidate's figure, drawn by plotly's own (JSON-escaped) script; raises
    `MissingExtra` when there is one to draw and plotly is not installed."""
    if not has_samples(data):
        return {}
    require("plotly", PLOTS_FEATURE)
    from speedproof.report.plots import candidate_figure, figure_html

    drawn: dict[int, Markup] = {}
    for campaign in data.campaigns:
        for candidate in campaign.candidates:
            figure = candidate_figure(candidate)
            if figure is not None:
                drawn[candidate.id] = Markup(figure_html(figure, f"plot-{candidate.id}"))
    return drawn


def _plotly(figures: dict[int, Markup], single_file: bool) -> tuple[Markup, dict[str, str]]:
    """plotly.js inlined (single file) or the files to write beside the page; a page with no
    figure does without it."""
    if not figures:
        return Markup(""), {}
    from speedproof.report.plots import plotly_js

    if single_file:
        return Markup(plotly_js()), {}
    return Markup(""), {PLOTLY_FILE: plotly_js()}


def html_page(data: ReportData, *, single_file: bool = False) -> HtmlPage:
    """The page, with its plots when plotly is installed and without them when it is not."""
    env = environment(html=True)
    env.filters["diff_lines"] = diff_lines
    try:
        figures = plots(data)
        left_out = None
    except MissingExtra as exc:
        figures, left_out = {}, str(exc)
    inline, beside = _plotly(figures, single_file)
    text = env.get_template(TEMPLATE).render(
        data=data,
        plots=figures,
        plotly_js=inline,
        plotly_src=next(iter(beside), None),
        plots_left_out=left_out,
    )
    return HtmlPage(text, left_out, beside)
