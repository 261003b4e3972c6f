"""Discovery's records in a campaign's ledger, read for the report and the campaign summary.

Rows as `campaign.discovery_log` writes them: one `discoveries` row per profiling of a parent
revision, its `hot_functions` by rank and its `proposer_outcomes` in the order written (every
rule's outcome with the heuristic proposer, then the roles' answers). A campaign that judged no
candidate is explained here: what it profiled, what it found hot, and why nothing was proposed
for each function. Ledgers written before these tables existed read as no discovery.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from speedproof.report import rows
from speedproof.report.model import Candidate, Discovery, Event, HotFunction, ProposerOutcome

EVERY_FUNCTION = ""
NOT_FOUND = "not found: "  # how a rule without a reason of its own says its pattern is absent


def discoveries(
    found: Sequence[dict[str, Any]],
    functions: Sequence[dict[str, Any]],
    outcomes: Sequence[dict[str, Any]],
    events: Sequence[Event],
    candidates: Sequence[Candidate],
) -> list[Discovery]:
    """The campaign's discoveries in order: `found` are its discoveries rows, `functions` and
    `outcomes` the hot_functions and proposer_outcomes rows of the whole ledger."""
    by_discovery: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in functions:
        by_discovery[row["discovery_id"]].append(row)
    said: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in outcomes:
        said[row["discovery_id"]].append(row)
    made_by = {
        e.body.get("commit"): e.candidate_id
        for e in events
        if e.kind == "accepted" and isinstance(e.body, dict)
    }
    proposed = _proposed(found, candidates)
    return [
        _discovery(row, by_discovery[row["id"]], said[row["id"]], made_by, proposed)
        for row in found
    ]


def _proposed(
    found: Sequence[dict[str, Any]], candidates: Sequence[Candidate]
) -> dict[tuple[int, str], list[int]]:
    """(discovery id, function) -> the candidates proposed for it while that discovery of the
    candidate's parent was the newest one."""
    chosen: dict[tuple[int, str], list[int]] = defaultdict(list)
    for candidate in candidates:
        earlier = [
            d
            for d in found
            if d["parent"] == candidate.base_rev and d["created_at"] <= candidate.created_at
        ]
        if earlier and candidate.proposal.function:
            chosen[(earlier[-1]["id"], candidate.proposal.function)].append(candidate.id)
    return chosen


def _discovery(
    row: dict[str, Any],
    functions: list[dict[str, Any]],
    outcomes: list[dict[str, Any]],
    made_by: dict[Any, int | None],
    proposed: dict[tuple[int, str], list[int]],
) -> Discovery:
    by_function: dict[str, list[ProposerOutcome]] = defaultdict(list)
    for outcome in outcomes:
        by_function[outcome["function"]].append(_outcome(outcome))
    return Discovery(
        created_at=row["created_at"],
        parent=row["parent"],
        parent_candidate=made_by.get(row["parent"]),
        profiler=row["profiler"],
        unit=row["unit"],
        workloads=[str(w) for w in rows.decode(row["workloads"], "discovery workloads")],
        notes=[str(n) for n in rows.decode(row["notes"], "discovery notes")],
        functions=[
            _function(f, by_function.get(f["name"], []), proposed.get((row["id"], f["name"]), []))
            for f in sorted(functions, key=lambda f: f["rank"])
        ],
        outcomes=by_function.get(EVERY_FUNCTION, []),
    )


def _function(
    row: dict[str, Any], outcomes: list[ProposerOutcome], candidates: list[int]
) -> HotFunction:
    return HotFunction(
        rank=int(row["rank"]),
        name=row["name"],
        file=row["file"],
        start_line=int(row["start_line"]),
        end_line=int(row["end_line"]),
        self_pct=float(row["self_pct"]),
        cum_pct=float(row["cum_pct"]),
        samples=int(row["samples"]),
        outcomes=outcomes,
        candidates=candidates,
    )


def _outcome(row: dict[str, Any]) -> ProposerOutcome:
    return ProposerOutcome(
        role=row["role"],
        rule=row["rule"],
        proposed=bool(row["proposed"]),
        reason=row["reason"],
    )


def summary_lines(found: Discovery, *, judged: bool, width: int = 120) -> list[str]:
    """The end-of-campaign summary of one discovery, as plain lines: each hot function with its
    shares, and, when nothing was judged, why each rule and role proposed nothing for it."""
    lines = [
        f"hot functions at {found.parent[:12]} ({found.profiler}, "
        f"{', '.join(found.workloads) or 'no workload'}):"
    ]
    for f in found.functions:
        what = _what_became(f)
        lines.append(
            f"  {f.rank:>2}. {f.name} ({f.file}:{f.start_line}-{f.end_line}) "
            f"{f.self_pct:.1f}% self, {f.cum_pct:.1f}% cumulative: {what}"
        )
        if not judged:
            for line in _declines(f.outcomes):
                lines.extend(_wrapped(line, "      ", width))
    for o in found.outcomes:
        lines.extend(_wrapped(f"{_who(o)}: {o.reason}", "  ", width))
    return lines


def _declines(outcomes: list[ProposerOutcome]) -> list[str]:
    """One line per decline with a reason of its own; the rules whose pattern simply does not
    occur share one line (the report lists each)."""
    unmatched = [o.rule for o in outcomes if o.rule and o.reason.startswith(NOT_FOUND)]
    lines = [
        f"{_who(o)}: {o.reason}"
        for o in outcomes
        if not o.proposed and not (o.rule and o.reason.startswith(NOT_FOUND))
    ]
    if unmatched:
        lines.insert(0, f"pattern not found by: {', '.join(r for r in unmatched if r)}")
    return lines


def _what_became(function: HotFunction) -> str:
    if function.candidates:
        return "candidate " + ", ".join(f"#{c}" for c in function.candidates)
    if function.proposing:
        return "rewrites from " + ", ".join(function.proposing)
    return "nothing proposed" if function.outcomes else "not looked at"


def _who(outcome: ProposerOutcome) -> str:
    return f"rule {outcome.rule}" if outcome.rule else outcome.role


def _wrapped(text: str, indent: str, width: int) -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    )
