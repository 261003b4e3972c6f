"""A campaign folder's ledger, read into one `ReportData`.

Every table is read once, in insertion order, and grouped by campaign: the campaigns table gives
the order, a campaign id that appears only on candidates or events still gets its group, and the
candidates judged outside any campaign form a last group of their own. Reading never writes a
row; the ledger may be read while a campaign is still appending to it (WAL).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.ledger import LEDGER_FILE, Ledger
from speedproof.report import advice, discovery, rows
from speedproof.report.chain import build_chain, chain_ids, costs, parent_of
from speedproof.report.model import Campaign, Candidate, Event, ExitCondition, ReportData, Status

_VERDICTS: dict[str, Status] = {
    "accepted": "accepted",
    "rejected": "rejected",
    "inconclusive": "inconclusive",
}
_TABLES = (
    "candidates",
    "verdicts",
    "gates",
    "comparisons",
    "samples",
    "campaigns",
    "hot_functions",
)
# Tables whose rows carry an id column: read in id order, the order they were appended.
_CAMPAIGN_TABLES = ("events", "role_calls", "concerns", "discoveries", "proposer_outcomes")


def ledger_path(folder: Path) -> Path:
    """The ledger of a campaign folder; a missing folder or ledger is a named error."""
    if not folder.is_dir():
        raise InfrastructureError(f"no campaign folder at {folder}")
    path = folder / LEDGER_FILE
    if not path.is_file():
        raise InfrastructureError(f"no ledger at {path}: {folder} is not a campaign folder")
    return path


def load_report(folder: Path) -> ReportData:
    path = ledger_path(folder)
    with Ledger(path) as ledger:
        tables = _Tables.read(ledger)
    return ReportData(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        ledger=str(path),
        campaigns=[tables.campaign(key) for key in tables.campaign_keys()],
    )


@dataclass
class _Tables:
    """Every row of the ledger, grouped by the key the report looks it up by."""

    candidates: list[dict[str, Any]]
    campaigns: dict[str, dict[str, Any]]
    verdicts: dict[int, dict[str, Any]]
    by_candidate: dict[str, dict[int, list[dict[str, Any]]]]
    events: list[Event] = field(default_factory=list)
    event_campaigns: list[str | None] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    # discoveries, hot_functions and proposer_outcomes rows (empty in an older ledger's copy).
    discovery: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def read(cls, ledger: Ledger) -> _Tables:
        every = {t: ledger.query(f"SELECT * FROM {t} ORDER BY rowid") for t in _TABLES}
        every |= {t: ledger.query(f"SELECT * FROM {t} ORDER BY id") for t in _CAMPAIGN_TABLES}
        grouped: dict[str, dict[int, list[dict[str, Any]]]] = {}
        for table in ("gates", "comparisons", "samples", "concerns"):
            grouped[table] = defaultdict(list)
            for row in every[table]:
                grouped[table][row["candidate_id"]].append(row)
        tables = cls(
            candidates=every["candidates"],
            campaigns={row["id"]: row for row in every["campaigns"]},
            verdicts={row["candidate_id"]: row for row in every["verdicts"]},
            by_candidate=grouped,
            events=[rows.event(row) for row in every["events"]],
            event_campaigns=[row["campaign"] for row in every["events"]],
            discovery={t: every[t] for t in ("discoveries", "hot_functions", "proposer_outcomes")},
        )
        campaign_of = {c["id"]: c["campaign"] for c in tables.candidates}
        tables.calls = [
            {**row, "campaign": row["campaign"] or campaign_of.get(row["candidate_id"])}
            for row in every["role_calls"]
        ]
        return tables

    def campaign_keys(self) -> list[str | None]:
        """Campaigns in the order they were started, then ids seen only elsewhere, then None."""
        started = sorted(self.campaigns, key=lambda k: (self.campaigns[k]["created_at"], k))
        keys: list[str | None] = list(started)
        seen = [c["campaign"] for c in self.candidates] + self.event_campaigns
        seen += [call["campaign"] for call in self.calls]
        seen += [d["campaign"] for d in self.discovery.get("discoveries", [])]
        for key in seen:
            if key not in keys and key is not None:
                keys.append(key)
        return [*keys, None] if None in seen else keys

    def campaign(self, key: str | None) -> Campaign:
        events = [e for e, c in zip(self.events, self.event_campaigns, strict=True) if c == key]
        members = [c for c in self.candidates if c["campaign"] == key]
        verdicts = {c["id"]: self._verdict(c["id"]) for c in members}
        chain = chain_ids(key, events, verdicts)
        calls = [call for call in self.calls if call["campaign"] == key]
        candidates = [self._candidate(row, chain, events, calls) for row in members]
        info = self.campaigns.get(key) if key is not None else None
        return Campaign(
            id=key,
            created_at=info["created_at"] if info else None,
            target=info["target"] if info else None,
            repo=info["repo"] if info else None,
            base_rev=info["base_rev"] if info else None,
            options=rows.decode(info["options"], f"campaign {key} options") if info else {},
            exit=_exit(events),
            events=events,
            candidates=candidates,
            costs=costs(rows.role_call(call) for call in calls),
            chain=build_chain(candidates, chain),
            advisor=advice.advisor_parents(events),
            explorer=advice.exploration(events),
            discovery=discovery.discoveries(
                [d for d in self.discovery["discoveries"] if d["campaign"] == key],
                self.discovery["hot_functions"],
                self.discovery["proposer_outcomes"],
                events,
                candidates,
            ),
        )

    def _verdict(self, candidate_id: int) -> str | None:
        row = self.verdicts.get(candidate_id)
        return None if row is None else row["verdict"]

    def _candidate(
        self,
        row: dict[str, Any],
        chain: list[int],
        events: list[Event],
        calls: list[dict[str, Any]],
    ) -> Candidate:
        cid = row["id"]
        verdict = self.verdicts.get(cid)
        mine = [call for call in calls if call["candidate_id"] == cid]
        answers = [c["answer"] for c in mine if c["role"] == "optimizer" and c["ok"]]
        told = [e for e in events if e.candidate_id == cid and e.kind == "candidate"]
        bodies = [rows.decode(c["body"], "comparison") for c in self._of("comparisons", cid)]
        readings = [rows.reading(body) for body in bodies]
        return Candidate(
            id=cid,
            created_at=row["created_at"],
            finished_at=verdict["created_at"] if verdict else None,
            campaign=row["campaign"],
            origin=row["origin"],
            target=row["target"],
            base_rev=row["base_rev"],
            patch_sha256=row["patch_sha256"],
            diff=row["diff"],
            sandbox=row["sandbox"],
            status=_status(verdict),
            verdict=verdict["verdict"] if verdict else None,
            reasons=rows.decode(verdict["reasons"], "verdict reasons") if verdict else [],
            rests_on=verdict["rests_on"] if verdict else None,
            lane=verdict["lane"] if verdict else None,
            error=verdict["error"] if verdict else None,
            timings=rows.decode(verdict["timings"], "verdict timings") if verdict else {},
            parent=parent_of(cid, chain) if row["campaign"] is not None else None,
            proposal=rows.proposal(answers, told),
            gates=[rows.gate(g) for g in self._of("gates", cid)],
            readings=sorted(readings, key=rows.reading_order),
            distributions=rows.distributions(
                self._of("samples", cid), rows.left_out_series(self._of("gates", cid))
            ),
            concerns=[rows.concern(c) for c in self._of("concerns", cid)],
            role_calls=[rows.role_call(c) for c in mine],
            facts=rows.decode(row["facts"], f"candidate {cid} facts"),
            advisor=advice.advisor_review(events, cid),
        )

    def _of(self, table: str, candidate_id: int) -> list[dict[str, Any]]:
        return self.by_candidate[table].get(candidate_id, [])


def _status(verdict: dict[str, Any] | None) -> Status:
    if verdict is None:
        return "unfinished"
    value = verdict["verdict"]
    if value is None:
        return "error"
    if value not in _VERDICTS:
        raise InfrastructureError(f"candidate {verdict['candidate_id']} has verdict {value!r}")
    return _VERDICTS[value]


def _exit(events: list[Event]) -> ExitCondition | None:
    """Why the campaign stopped, if it has stopped.

    The last of its start, resume and exit events decides: a campaign resumed after an exit is
    running again, and one that stopped twice reports why it stopped last.
    """
    marks = [e for e in events if e.kind in ("start", "resume", "exit")]
    if not marks or marks[-1].kind != "exit":
        return None
    last = marks[-1]
    body = last.body if isinstance(last.body, dict) else {}
    condition = body.get("condition")
    if not isinstance(condition, str):
        raise InfrastructureError(f"the exit event of {last.created_at} names no condition")
    return ExitCondition(
        condition=condition, message=str(body.get("message", "")), created_at=last.created_at
    )
