"""Ledger rows into the report's models: one function a table, no judgement.

The ledger keeps JSON text in several columns; each is decoded here and a value that is not what
the writer promised is a named error, because a report that silently drops a row would misstate
what the campaign did.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.report.model import (
    Concern,
    Distribution,
    Event,
    Gate,
    Proposal,
    Reading,
    RoleCall,
)

# The built-in timed metrics a sample row carries, with the unit the report shows them in and
# the factor from the ledger's unit (seconds, KiB) to it.
SAMPLE_METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("wall", "wall_s", "ms", 1000.0),
    ("cpu", "cpu_s", "ms", 1000.0),
    ("memory", "max_rss_kib", "MiB", 1 / 1024),
)
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.DOTALL)


def decode(text: str | None, what: str) -> Any:
    """One JSON column; NULL reads as None."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InfrastructureError(f"the ledger's {what} is not valid JSON: {exc}") from exc


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def gate(row: dict[str, Any]) -> Gate:
    detail = decode(row["detail"], f"gate {row['name']} detail")
    if not isinstance(detail, dict):
        raise InfrastructureError(f"the ledger's gate {row['name']} detail is not an object")
    reasons = detail.pop("reasons", [])
    return Gate(
        name=row["name"],
        passed=bool(row["passed"]),
        duration_s=float(row["duration_s"]),
        reasons=[str(r) for r in reasons],
        detail=detail,
    )


def reading(body: dict[str, Any]) -> Reading:
    """A comparison as the ledger dumped it; non-finite figures become None with a note."""
    delta = _finite(body["delta_pct"])
    note = str(body.get("note", ""))
    if delta is None and not note:
        note = "the relative change is not a finite number"
    return Reading(
        workload=body["workload"],
        metric=body["metric"],
        tier=body["tier"],
        lane=body.get("lane", "timed"),
        n_baseline=int(body["n_baseline"]),
        n_candidate=int(body["n_candidate"]),
        baseline_mean=_finite(body["baseline_mean"]),
        candidate_mean=_finite(body["candidate_mean"]),
        delta_pct=delta,
        ci_low_pct=_finite(body["ci_low_pct"]),
        ci_high_pct=_finite(body["ci_high_pct"]),
        p_value=_finite(body["p_value"]),
        significant=bool(body["significant"]),
        supported=bool(body["supported"]),
        exact=bool(body.get("exact", False)),
        lower_is_better=bool(body.get("lower_is_better", True)),
        note=note,
    )


_LANE_ORDER = {"timed": 0, "instructions": 1, "reported": 2}
_METRIC_ORDER = {"wall": 0, "cpu": 1, "memory": 2, "instructions": 3, "binary_size": 4}


def reading_order(r: Reading) -> tuple[str, int, int, str]:
    """Workload, then the timed lane before the instruction lane beside it."""
    return (r.workload, _LANE_ORDER.get(r.lane, 9), _METRIC_ORDER.get(r.metric, 9), r.metric)


def left_out_series(gates: list[dict[str, Any]]) -> set[int]:
    """Series the analysis left out: a round measured again on the same workload and look.

    The schedule (`measure.schedule`) measures a contended round once more and keeps the
    later one; each series' `measure:<workload>` gate records its workload, look and series.
    """
    latest: dict[tuple[str, int], int] = {}
    every: set[int] = set()
    for row in gates:
        if not row["name"].startswith("measure:"):
            continue
        detail = decode(row["detail"], f"gate {row['name']} detail")
        if not isinstance(detail, dict) or not {"workload", "look", "series"} <= set(detail):
            continue
        key, series = (str(detail["workload"]), int(detail["look"])), int(detail["series"])
        every.add(series)
        latest[key] = max(series, latest.get(key, series))
    return every - set(latest.values())


def distributions(samples: list[dict[str, Any]], left_out: set[int]) -> list[Distribution]:
    """Per workload and metric, every sample's value a side (warm-ups are never in the ledger)."""
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    units: dict[str, str] = {}
    series: dict[str, set[int]] = defaultdict(set)
    for row in samples:
        workload, number = row["workload"], int(row["series"])
        side = ("left_out_" if number in left_out else "") + row["side"]
        series[workload].add(number)
        for metric, column, unit, factor in SAMPLE_METRICS:
            if row[column] is not None:
                values[(workload, metric)][side].append(float(row[column]) * factor)
                units[metric] = unit
        reported = decode(row["reported"], f"reported metrics of a {workload} sample") or {}
        for name, value in reported.items():
            values[(workload, name)][side].append(float(value))
            units.setdefault(name, "")
    return [
        Distribution(
            workload=workload,
            metric=metric,
            unit=units[metric],
            baseline=sides["baseline"],
            candidate=sides["candidate"],
            left_out_baseline=sides["left_out_baseline"],
            left_out_candidate=sides["left_out_candidate"],
            series=len(series[workload]),
        )
        for (workload, metric), sides in sorted(values.items(), key=_distribution_order)
    ]


def _distribution_order(item: tuple[tuple[str, str], dict[str, list[float]]]) -> tuple[Any, ...]:
    (workload, metric), _ = item
    return (workload, _METRIC_ORDER.get(metric, 9), metric)


def role_call(row: dict[str, Any]) -> RoleCall:
    return RoleCall(
        created_at=row["created_at"],
        role=row["role"],
        provider=row["provider"],
        model=row["model"],
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cost_usd=_finite(row["cost_usd"]),
        duration_s=float(row["duration_s"]),
        ok=bool(row["ok"]),
        rejection=row["rejection"],
    )


def concern(row: dict[str, Any]) -> Concern:
    return Concern(
        created_at=row["created_at"],
        source=row["source"],
        severity=row["severity"],
        text=row["text"],
    )


def event(row: dict[str, Any]) -> Event:
    return Event(
        created_at=row["created_at"],
        kind=row["kind"],
        candidate_id=row["candidate_id"],
        body=decode(row["body"], f"{row['kind']} event body"),
    )


def answer_object(text: str) -> dict[str, Any] | None:
    """The JSON object of a role's answer: the whole text, else its one fenced block."""
    for chunk in (text, *_FENCE.findall(text)):
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def proposal(answers: list[str], events: list[Event]) -> Proposal:
    """The optimizer's hypothesis and rule for one candidate.

    From its last usable optimizer answer; the candidate's own "candidate" event fills what the
    answer lacks, for a loop that records the proposal there instead.
    """
    found: dict[str, str] = {}
    sources: list[Any] = [answer_object(a) for a in reversed(answers)] + [e.body for e in events]
    for source in sources:
        if not isinstance(source, dict):
            continue
        for key in ("hypothesis", "rule", "function"):
            value = source.get(key)
            if isinstance(value, str) and value and key not in found:
                found[key] = value
    return Proposal(**found)
