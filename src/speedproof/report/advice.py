"""The advisor's and the explorer's records in a campaign's events, read for the report.

Bodies as `advisor.records` writes them (kind "advisor": "causes" once per parent revision,
"hazards" with a candidate's id) and as `campaign.explorer` writes them (kind "explorer":
"proposals" once a campaign, "profiled" per parent). Both are advice and profiling only: the
report shows them beside the verdicts, never as part of one. A body that is not what its
writer promised is a named error, like every other ledger row the report reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from speedproof.ground.errors import InfrastructureError
from speedproof.report.model import (
    AdvisorCause,
    AdvisorFunction,
    AdvisorHazard,
    AdvisorParent,
    AdvisorReview,
    DroppedWorkload,
    Event,
    Exploration,
    ExplorerProfile,
    ExplorerProposal,
)

ADVISOR = "advisor"
EXPLORER = "explorer"
T = TypeVar("T")


def _of(events: Sequence[Event], kind: str, what: str) -> list[Event]:
    return [
        e
        for e in events
        if e.kind == kind and isinstance(e.body, dict) and e.body.get("what") == what
    ]


def _read(event: Event, reader: Callable[[Event], T]) -> T:
    try:
        return reader(event)
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise InfrastructureError(
            f"the {event.kind} event of {event.created_at} is not what its writer records: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def advisor_parents(events: Sequence[Event]) -> list[AdvisorParent]:
    """The advisor's cause flags, one entry per parent revision, in the order they were asked."""
    made_by = {
        e.body.get("commit"): e.candidate_id
        for e in events
        if e.kind == "accepted" and isinstance(e.body, dict)
    }
    found: list[AdvisorParent] = []
    for event in _of(events, ADVISOR, "causes"):
        found.append(_read(event, lambda e: _parent(e, made_by)))
    return found


def _parent(event: Event, made_by: dict[Any, int | None]) -> AdvisorParent:
    body = event.body
    functions = [_function(entry) for entry in body["functions"] if entry.get("asked", True)]
    return AdvisorParent(
        created_at=event.created_at,
        parent=str(body["parent"]),
        parent_candidate=made_by.get(body["parent"]),
        model=str(body["model"]),
        functions=sorted(functions, key=lambda f: (f.rank, f.function)),
    )


def _function(entry: dict[str, Any]) -> AdvisorFunction:
    causes = [_cause(record) for record in entry["causes"]]
    flagged = set(entry["flagged"])
    return AdvisorFunction(
        function=str(entry["function"]),
        self_pct=float(entry["self_pct"]),
        score=float(entry["score"]),
        rank=int(entry["rank"]),
        flagged=sorted(
            (c for c in causes if c.cause in flagged), key=lambda c: (-c.z, -c.probability)
        ),
        vetoed=[c for c in causes if c.veto is not None],
    )


def _cause(record: dict[str, Any]) -> AdvisorCause:
    veto = record.get("veto")
    return AdvisorCause(
        cause=str(record["cause"]),
        probability=float(record["probability"]),
        z=float(record["z"]),
        veto=None if veto is None else str(veto),
        evidence=[str(e) for e in record.get("evidence", [])],
    )


def advisor_review(events: Sequence[Event], candidate_id: int) -> AdvisorReview | None:
    """The advisor's hazard review of one candidate, if it was asked for one."""
    mine = [e for e in _of(events, ADVISOR, "hazards") if e.candidate_id == candidate_id]
    return _read(mine[-1], _review) if mine else None


def _review(event: Event) -> AdvisorReview:
    body = event.body
    flagged = set(body["flagged"])
    hazards = [
        AdvisorHazard(
            hazard=str(h["hazard"]),
            probability=float(h["probability"]),
            z=float(h["z"]),
            evidence=[str(e) for e in h.get("evidence", [])],
        )
        for h in body["hazards"]
    ]
    return AdvisorReview(
        model=str(body["model"]),
        function=str(body["function"]),
        asked=len(hazards),
        flagged=sorted((h for h in hazards if h.hazard in flagged), key=lambda h: -h.probability),
    )


def exploration(events: Sequence[Event]) -> Exploration | None:
    """The explorer's proposals and every profile they widened; None if it was never asked."""
    asked = _of(events, EXPLORER, "proposals")
    if not asked:
        return None
    profiles = [_read(e, _profile) for e in _of(events, EXPLORER, "profiled")]
    return _read(asked[0], lambda e: _exploration(e, profiles))


def _exploration(event: Event, profiles: list[ExplorerProfile]) -> Exploration:
    body = event.body
    rejection = body.get("rejection")
    return Exploration(
        created_at=event.created_at,
        parent=str(body["parent"]),
        rejection=None if rejection is None else str(rejection),
        proposals=[ExplorerProposal.model_validate(p) for p in body["proposals"]],
        profiles=profiles,
    )


def _profile(event: Event) -> ExplorerProfile:
    body = event.body
    return ExplorerProfile(
        created_at=event.created_at,
        parent=str(body["parent"]),
        workloads=[str(w) for w in body["workloads"]],
        extra=[str(w) for w in body.get("extra", [])],
        dropped=[DroppedWorkload.model_validate(d) for d in body.get("dropped", [])],
    )
