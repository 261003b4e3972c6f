"""Evaluate any provider on a split: failure categories, per-family tables, report and chart.

Protocol: for each case, the one-shot conversation from `model_view`; with `attempts > 1`, each
failed attempt is followed by category-only feedback, as in collection. A case's outcome is its
last attempt's category. The answers are verified on a cluster, several cases at a time
(`dialogue.converse`); the rows are written by the driver, in case order. Infrastructure
outcomes are reported apart and left out of the pass rate's denominator: they say nothing about
the model.

Written to the output folder:
  results.jsonl   one row per attempt (raw: answer text, status, reward, Ir counts, the seed
                  that drew its random and benchmark inputs)
  report.json     split, protocol, base seed, SHA-256 of the split file and of results.jsonl,
                  totals

Every case is verified with one seed derived from the base seed and the case id: all attempts on
a case see the same inputs (so the reference is measured once), no two cases share inputs, and a
base seed reproduces every reward. Without `--seed` the base seed is fresh and recorded.
  chart.html      per-family outcome bars (self-contained plotly HTML)
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speedproof.agents.providers.base import Provider
from speedproof.cluster.jobs import Cluster
from speedproof.cluster.spec import cluster_scope
from speedproof.corpus.dialogue import Dialogue, Rules, Turn, converse
from speedproof.corpus.grading import CATEGORIES, Judged
from speedproof.corpus.jsonl import append_rows, sha256_file
from speedproof.extras import require
from speedproof.functions.case import Case

RESULTS = "results.jsonl"
REPORT = "report.json"
CHART = "chart.html"
CHART_FEATURE = "drawing the evaluation's per-family chart"


@dataclass(frozen=True)
class EvalConfig:
    split: str
    attempts: int = 1
    role: str = "student"
    seed: int | None = None


def case_seed(base: int, case: Case) -> int:
    """The seed a case is verified with in an evaluation of base seed `base`."""
    digest = hashlib.sha256(f"{base}:{case.id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def _attempt_row(case: Case, turn: Turn) -> dict[str, Any]:
    judged = turn.judged
    return {
        "case_id": case.id,
        "family": case.family,
        "template": case.template,
        "attempt": turn.attempt,
        "model": turn.completion.model,
        "answer": turn.completion.text,
        "category": judged.category,
        "status": judged.status,
        "reward": judged.reward,
        "ref_ir": judged.ref_ir,
        "cand_ir": judged.cand_ir,
        "detail": judged.detail,
        "seed": judged.seed,
        "verifier_digest": judged.verifier_digest,
        "timestamp": time.time(),
    }


def _final(judged: Judged) -> bool:
    return judged.category in ("passed", "infrastructure")


def _tally(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {c: 0 for c in CATEGORIES}
    for row in outcomes:
        counts[str(row["category"])] += 1
    judged = len(outcomes) - counts["infrastructure"]
    return {
        "cases": len(outcomes),
        "judged": judged,
        "passed": counts["passed"],
        "pass_rate": counts["passed"] / judged if judged else None,
        "categories": counts,
    }


def summarise(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Totals and per-family totals over each case's final attempt."""
    families = sorted({str(r["family"]) for r in outcomes})
    return {
        "total": _tally(outcomes),
        "families": {f: _tally([r for r in outcomes if r["family"] == f]) for f in families},
    }


def evaluate(
    cases: Sequence[Case],
    provider: Provider,
    config: EvalConfig,
    out: Path,
    *,
    split_file: Path,
    provider_name: str,
    progress: Callable[[Case, dict[str, Any]], None] | None = None,
    cluster: Cluster | None = None,
) -> dict[str, Any]:
    """Run the evaluation and write results, report and chart into `out`; returns the report.

    The answers are verified on `cluster` (two local worker processes when None), several
    cases at a time (`dialogue.converse`); every file is written here, in case order.
    """
    out.mkdir(parents=True, exist_ok=True)
    results = out / RESULTS
    results.unlink(missing_ok=True)
    outcomes: list[dict[str, Any]] = []
    base = secrets.randbits(62) if config.seed is None else config.seed

    def finished(dialogue: Dialogue) -> None:
        rows = [_attempt_row(dialogue.case, turn) for turn in dialogue.turns]
        append_rows(results, rows)
        outcomes.append(rows[-1])
        if progress:
            progress(dialogue.case, rows[-1])

    rules = Rules(config.attempts, config.role, final=_final)
    with cluster_scope(cluster) as running:
        converse(cases, provider, rules, running, finished, lambda case: case_seed(base, case))
    report = {
        "split": config.split,
        "split_file": str(split_file),
        "split_sha256": sha256_file(split_file),
        "results_file": RESULTS,
        "results_sha256": sha256_file(results),
        "protocol": "one-shot" if config.attempts == 1 else f"{config.attempts}-attempt",
        "provider": provider_name,
        "seed": base,
        "models": sorted({str(r["model"]) for r in outcomes}),
        "verifier_digests": sorted({str(r["verifier_digest"]) for r in outcomes}),
        "categories": list(CATEGORIES),
        **summarise(outcomes),
    }
    (out / REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_chart(report, out / CHART)
    return report


def write_chart(report: dict[str, Any], path: Path) -> None:
    """Stacked bars of outcome categories per family, as self-contained HTML; `MissingExtra`
    naming the report extra without plotly (report.json is written first, so nothing is lost)."""
    go = require("plotly.graph_objects", CHART_FEATURE)

    families = list(report["families"])
    figure = go.Figure()
    for category in CATEGORIES:
        counts = [report["families"][f]["categories"][category] for f in families]
        if any(counts):
            figure.add_bar(name=category, x=families, y=counts)
    figure.update_layout(
        barmode="stack",
        title=f"{report['split']} ({report['protocol']}): outcome per family",
        yaxis_title="cases",
    )
    figure.write_html(str(path), include_plotlyjs=True, full_html=True)
