"""The HTML report in a real browser: headless Chromium (Debian package `chromium`) opens the page
from disk with no network, runs plotly.js (from the file beside the page, or inlined into a
single-file page), and the DOM it leaves shows every figure drawn.

A copy of the page gets a first script that records uncaught errors, rejected promises and
`console.error` calls into an attribute of <html>, so the dumped DOM carries them; Chromium's own
console log on stderr is checked as well. A page with plotly.js removed proves the harness sees
a failure.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from speedproof.report import write_report
from support.campaign_ledger import build_campaign_ledger

TIMEOUT_S = 120
# HTML elements serialised without an end tag; everything else, SVG included, has one.
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
RECORDER = """<script>
window.__errors = [];
window.addEventListener("error", (e) => window.__errors.push("error: " + e.message));
window.addEventListener("unhandledrejection",
  (e) => window.__errors.push("rejection: " + e.reason));
const __consoleError = console.error;
console.error = (...args) => {
  window.__errors.push("console: " + args.join(" "));
  __consoleError(...args);
};
window.addEventListener("load", () => setTimeout(() =>
  document.documentElement.setAttribute("data-errors", JSON.stringify(window.__errors)), 0));
</script>"""


@dataclass(frozen=True)
class Rendered:
    dom: str
    stderr: str
    errors: list[str]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("headless Chromium is missing: install the Debian package `chromium`")
    return found


def _browse(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            # Lets plotly's timers and promises settle before the DOM is dumped.
            "--virtual-time-budget=15000",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _render(page: Path) -> Rendered:
    recorded = page.with_name("recorded-" + page.name)
    recorded.write_text(
        page.read_text(encoding="utf-8").replace("<head>", "<head>" + RECORDER, 1),
        encoding="utf-8",
    )
    done = _browse(recorded, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    marker = re.search(r'<html[^>]*data-errors="([^"]*)"', done.stdout)
    assert marker is not None, "the page never finished loading"
    errors = json.loads(marker.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return Rendered(done.stdout, done.stderr, errors)


class _Figures(HTMLParser):
    """Per plotly graph div: whether plotly marked it drawn, its svg layers and box traces."""

    def __init__(self) -> None:
        super().__init__()
        self.graphs: dict[str, dict[str, int | bool]] = {}
        self._stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        owner = self._stack[-1] if self._stack else None
        if "plotly-graph-div" in classes:
            owner = found.get("id") or ""
            self.graphs[owner] = {"drawn": "js-plotly-plot" in classes, "svgs": 0, "boxes": 0}
        elif owner is not None:
            self.graphs[owner]["svgs"] += tag == "svg" and "main-svg" in classes
            self.graphs[owner]["boxes"] += tag == "g" and {"trace", "boxes"} <= set(classes)
        if tag not in VOID:
            self._stack.append(owner)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID:
            self._stack.pop()


def _figures(dom: str) -> dict[str, dict[str, int | bool]]:
    parser = _Figures()
    parser.feed(dom)
    return parser.graphs


def _console_errors(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line and re.search(r"Uncaught|Error|error", line)
    ]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("campaign")
    build_campaign_ledger(folder)
    return write_report(folder).html


def test_every_figure_is_drawn_by_plotly_in_a_real_browser(page: Path) -> None:
    rendered = _render(page)
    graphs = _figures(rendered.dom)
    # Candidate 1 has 2 workloads and candidate 3 one, each with wall, cpu and memory panels
    # holding a baseline and a candidate box: 12 and 6 box traces.
    assert set(graphs) == {"plot-1", "plot-3"}
    assert all(g["drawn"] and int(g["svgs"]) >= 1 for g in graphs.values()), graphs
    assert (graphs["plot-1"]["boxes"], graphs["plot-3"]["boxes"]) == (12, 6)
    assert rendered.errors == []
    assert _console_errors(rendered.stderr) == []
    assert "net::ERR" not in rendered.stderr


def test_the_diff_script_never_runs_in_the_browser(page: Path) -> None:
    rendered = _render(page)
    assert "alert" not in " ".join(rendered.errors)
    assert "&lt;script&gt;alert('owned')&lt;/script&gt;" in rendered.dom


def test_the_harness_sees_a_page_whose_plots_cannot_draw(page: Path, tmp_path: Path) -> None:
    # The page alone, without the plotly.js written beside it.
    broken = tmp_path / "broken.html"
    broken.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    rendered = _render(broken)
    graphs = _figures(rendered.dom)
    assert graphs and not any(g["drawn"] for g in graphs.values())
    assert any("Plotly is not defined" in e for e in rendered.errors), rendered.errors


def test_a_single_file_page_draws_every_figure_on_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "campaign"
    build_campaign_ledger(folder)
    alone = tmp_path / "alone"
    alone.mkdir()
    written = write_report(folder, out=tmp_path / "out", single_file=True).html
    shutil.copy(written, alone / "report.html")
    rendered = _render(alone / "report.html")
    graphs = _figures(rendered.dom)
    assert set(graphs) == {"plot-1", "plot-3"} and all(g["drawn"] for g in graphs.values())
    assert rendered.errors == []


def test_a_screenshot_of_the_page_is_a_real_picture(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = _browse(page, "--window-size=1400,2400", f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # A blank 1400x2400 page compresses to a few KB; tables, badges and plots take far more.
    assert len(data) > 100_000
