"""Plotly figures of a candidate's samples: baseline against candidate, every run a point.

One figure a candidate, a row a workload and a column a metric (wall, cpu, memory, then any
reported metric). Each panel is a box with every sample drawn over it, because with 6-25 pairs
a side the points themselves are the honest picture and the box only guides the eye. Samples of
a round the analysis left out are drawn as boxes of their own, labelled "left out", beside the
two that were judged. The panel's title carries the comparison the policy saw (change,
interval, p, n) and, on the wall panel, the instruction lane's exact reading of the same
workload when there is one.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import plotly.offline
from plotly.subplots import make_subplots

from speedproof.report import format as fmt
from speedproof.report.model import Candidate, Distribution, Reading

ROW_HEIGHT_PX = 320
ROW_GAP_PX = 110
COLOURS = {"baseline": "#7f8c9d", "candidate": "#1f77b4"}
# Samples of a round the schedule measured again (contended machine): shown, never judged.
LEFT_OUT = "#d0a060"
CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True}


def plotly_js() -> str:
    """plotly.js itself, inlined once per page so the report opens with no network."""
    text: str = plotly.offline.get_plotlyjs()
    return text


def candidate_figure(candidate: Candidate) -> go.Figure | None:
    """The candidate's sample distributions, or None when it has no samples (ended at a gate)."""
    if not candidate.distributions:
        return None
    workloads = list(dict.fromkeys(d.workload for d in candidate.distributions))
    metrics = list(dict.fromkeys(d.metric for d in candidate.distributions))
    cells = {(d.workload, d.metric): d for d in candidate.distributions}
    titles = [
        _title(cells.get((w, m)), candidate.readings, w, m) for w in workloads for m in metrics
    ]
    height = ROW_HEIGHT_PX * len(workloads) + 60
    figure = make_subplots(
        rows=len(workloads),
        cols=len(metrics),
        subplot_titles=titles,
        # A fixed gap in pixels: the three-line panel titles and two-line tick labels need it
        # however many workloads there are.
        vertical_spacing=ROW_GAP_PX / height if len(workloads) > 1 else 0.0,
        horizontal_spacing=0.06,
    )
    for row, workload in enumerate(workloads, start=1):
        for col, metric in enumerate(metrics, start=1):
            cell = cells.get((workload, metric))
            if cell is not None:
                _panel(figure, cell, row, col)
    figure.update_layout(
        template="plotly_white",
        height=height,
        showlegend=False,
        margin={"l": 50, "r": 20, "t": 70, "b": 30},
        font={"size": 11},
    )
    figure.update_annotations(font_size=11)
    return figure


def figure_html(figure: go.Figure, div_id: str) -> str:
    """The figure's div and the script that draws it; plotly.js itself is on the page once."""
    text: str = figure.to_html(
        full_html=False, include_plotlyjs=False, config=CONFIG, div_id=div_id
    )
    return text


def _panel(figure: go.Figure, cell: Distribution, row: int, col: int) -> None:
    traces = [
        ("baseline", cell.baseline, COLOURS["baseline"]),
        ("candidate", cell.candidate, COLOURS["candidate"]),
        ("baseline<br>(left out)", cell.left_out_baseline, LEFT_OUT),
        ("candidate<br>(left out)", cell.left_out_candidate, LEFT_OUT),
    ]
    for name, values, colour in traces:
        if not values:
            continue
        figure.add_trace(
            go.Box(
                y=values,
                name=name,
                boxpoints="all",
                jitter=0.5,
                pointpos=0,
                marker={"color": colour, "size": 5, "opacity": 0.8},
                line={"width": 1},
                fillcolor="rgba(0,0,0,0)",
                hovertemplate=f"%{{y:.4g}} {cell.unit}<extra></extra>",
            ),
            row=row,
            col=col,
        )
    figure.update_yaxes(title_text=cell.unit, row=row, col=col)
    figure.update_xaxes(tickangle=0, row=row, col=col)


def _title(cell: Distribution | None, readings: list[Reading], workload: str, metric: str) -> str:
    unit = f" ({cell.unit})" if cell and cell.unit else ""
    lines = [f"<b>{workload}</b> · {metric}{unit}"]
    timed = _reading(readings, workload, metric, lane=None)
    lines.append(fmt.figure(timed) if timed else "no comparison recorded")
    if metric == "wall":
        counted = _reading(readings, workload, "instructions", lane="instructions")
        if counted is not None:
            lines.append(f"instructions: {fmt.figure(counted)}")
    return "<br>".join(lines)


def _reading(
    readings: list[Reading], workload: str, metric: str, lane: str | None
) -> Reading | None:
    for r in readings:
        if r.workload == workload and r.metric == metric and (lane is None or r.lane == lane):
            return r
    return None
