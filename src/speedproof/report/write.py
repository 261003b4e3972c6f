"""`speedproof report DIR`: the three versions of a campaign's report, written side by side."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.report.data import load_report
from speedproof.report.html import html_page
from speedproof.report.markdown import render_markdown

HTML_FILE = "report.html"
MARKDOWN_FILE = "report.md"
JSON_FILE = "report.json"


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path
    json: Path
    # The one-line reason report.html has no plots (the `report` extra is missing), else None.
    plots_left_out: str | None = None
    # Files the page loads from beside it (plotly.js), written with it.
    beside: tuple[Path, ...] = ()


def write_report(
    folder: Path, *, out: Path | None = None, single_file: bool = False
) -> ReportPaths:
    """Read `folder`'s ledger and write report.html, report.md and report.json.

    Into `out` when given (created if missing), else into the campaign folder itself; with
    plotly.js beside the page when it has plots, or inlined into it with `single_file`. All
    are rendered before any is written, so a failure leaves no mix of old and new versions.
    """
    data = load_report(folder)
    page = html_page(data, single_file=single_file)
    texts = {
        **page.beside,
        HTML_FILE: page.text,
        MARKDOWN_FILE: render_markdown(data),
        JSON_FILE: data.model_dump_json(indent=2) + "\n",
    }
    destination = folder if out is None else out
    try:
        destination.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (destination / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InfrastructureError(f"cannot write the report into {destination}: {exc}") from exc
    return ReportPaths(
        html=destination / HTML_FILE,
        markdown=destination / MARKDOWN_FILE,
        json=destination / JSON_FILE,
        plots_left_out=page.plots_left_out,
        beside=tuple(destination / name for name in page.beside),
    )
