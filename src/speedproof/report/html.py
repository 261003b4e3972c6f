"""The HTML report: one self-contained page, plotly.js inlined, nothing fetched when it opens."""

from __future__ import annotations

from markupsafe import Markup

from speedproof.report.environment import environment
from speedproof.report.model import ReportData
from speedproof.report.plots import candidate_figure, figure_html, plotly_js

TEMPLATE = "report.html.j2"


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


def plots(data: ReportData) -> dict[int, Markup]:
    """Each measured candidate's figure, drawn by plotly's own (JSON-escaped) script."""
    drawn: dict[int, Markup] = {}
    for campaign in data.campaigns:
        for candidate in campaign.candidates:
            figure = candidate_figure(candidate)
            if figure is not None:
                drawn[candidate.id] = Markup(figure_html(figure, f"plot-{candidate.id}"))
    return drawn


def render_html(data: ReportData) -> str:
    env = environment(html=True)
    env.filters["diff_lines"] = diff_lines
    figures = plots(data)
    return env.get_template(TEMPLATE).render(
        data=data,
        plots=figures,
        # plotly.js is ~4.8 MB; a page with no figure does without it.
        plotly_js=Markup(plotly_js()) if figures else Markup(""),
    )
