"""A campaign's state, rebuilt from its ledger alone: what was tried, what stood, what was spent.

The loop reads this before every candidate, and a resumed campaign reads exactly the same, so a
campaign killed at any point continues where the ledger says it stopped: the accepted chain
from the "accepted" events, every attempt from the candidate rows and their "candidate" events,
the spend from the role calls and the timestamps. Nothing is kept only in memory.

Event bodies the loop writes (kind: body):

- start: {"base_rev", "options", "folder", "provider"}; resume: {"given", "head"}
- candidate (with its candidate id): {"function", "hypothesis", "rule", "invalid",
  "diff_sha256", "parent", "review", "rejudge_of"}; on a cluster also "dispatch" (the
  dispatched event it lands) and, for a passed-over accept judged again, "carried_from"
- accepted (with its candidate id): {"commit", "parent", "index"}
- dispatched (on a cluster, before its job leaves): {"parent", "diff", "records"}, the
  proposal's role calls, candidate event and concerns (`records.Held`) until it lands
- note: {"what": "a/a" | "causes" | "no-rule" | "abandoned" | "passed-over" |
  "dispatch-abandoned", …}; passed-over: {"candidate", "linked", "parent"}, an accept of a
  wave that another accept of the same wave was linked in place of
- advisor: {"what": "causes", "parent", …} once per parent (`advisor.records`), and
  {"what": "hazards", …} with a candidate's id
- explorer: {"what": "proposals", "parent", "proposals", "accepted", "rejection"} once a
  campaign, {"what": "profiled", "parent", "workloads", "extra", "dropped"} per parent
- exit and escalation: {"condition", "message"}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from speedproof.judge.policy.decide import GUARDED_TIERS
from speedproof.judge.policy.evidence import TWIN_SUFFIX, PolicyRules
from speedproof.ledger import Ledger
from speedproof.manifest_loading import LoadedManifest

# Kinds of the gates whose failures the exit conditions look at.
GUARD_GATES = ("guard", "guard-applied")
TESTS_GATE = "tests"
PROTECTED_RULE = "protected-path"
# Reviewer and advisor concerns shown to the optimizer: the newest ones, enough to steer, few
# enough to read.
MAX_CONCERNS_SHOWN = 12


@dataclass(frozen=True)
class Reading:
    """One primary-metric reading on a representative workload, as the ledger recorded it."""

    workload: str
    baseline_mean: float
    candidate_mean: float
    lower_is_better: bool


@dataclass(frozen=True)
class Attempt:
    """One proposal of the campaign and what became of it."""

    candidate_id: int
    function: str
    hypothesis: str
    rule: str | None
    diff: str
    diff_sha256: str
    base_rev: str
    # A named rejection: the answer or the edit was unusable, so no patch was judged.
    invalid: bool
    finished: bool
    verdict: str | None
    error: str | None
    reasons: tuple[str, ...]
    # The reviewer recommended "reconsider" (None: there was no usable review).
    objected: bool | None
    tests_failed: tuple[str, ...]
    guard_protected: bool
    breaches: tuple[str, ...]
    readings: tuple[Reading, ...]
    rejection: str | None = None

    @property
    def gain(self) -> float:
        """How much better the primary metric read on the representative workloads, in %: the
        geometric mean of the candidate-to-baseline ratios (0 without readings). What picks the
        accept to link when a wave of a cluster campaign has several."""
        ratios = [r.candidate_mean / r.baseline_mean for r in self.readings]
        if not ratios or any(ratio <= 0 for ratio in ratios):
            return 0.0
        mean = math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))
        lower = all(r.lower_is_better for r in self.readings)
        return (1 - mean) * 100 if lower else (mean - 1) * 100

    @property
    def needs_judging(self) -> bool:
        """Proposed and judged, but the judgement never finished (killed, interrupted, error)."""
        return not self.invalid and (not self.finished or self.verdict is None)

    @property
    def needs_finishing(self) -> bool:
        """A named rejection whose verdict row was never written (killed in between)."""
        return self.invalid and not self.finished

    @property
    def history_verdict(self) -> str:
        return "invalid" if self.invalid else str(self.verdict)

    def view(self, redact: Redactor) -> dict[str, Any]:
        """The AttemptView a role sees, with every holdout name taken out of the reasons."""
        return {
            "candidate_id": self.candidate_id,
            "function": self.function,
            "hypothesis": self.hypothesis,
            "rule": self.rule,
            "verdict": self.history_verdict,
            "reasons": [redact(r) for r in self.reasons],
            "diff_sha256": self.diff_sha256,
        }


@dataclass(frozen=True)
class Redactor:
    """Replaces holdout workload ids and their input files in text a role will read."""

    names: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        # Longest first, so a file path is replaced before the bare file name inside it.
        for name in sorted(self.names, key=len, reverse=True):
            text = text.replace(name, "[holdout]")
        return text


def holdout_names(loaded: LoadedManifest) -> tuple[str, ...]:
    """Holdout workload ids and their input files (paths and bare names), and the ids of the
    representative workloads' twins: never shown."""
    names: list[str] = []
    for workload in loaded.manifest.workloads:
        if workload.tier == "representative":
            names.append(workload.id + TWIN_SUFFIX)
        if workload.tier != "holdout":
            continue
        names.append(workload.id)
        for file in [*workload.files, *([workload.stdin] if workload.stdin else [])]:
            names.extend([file, Path(file).name])
    return tuple(dict.fromkeys(n for n in names if n))


@dataclass(frozen=True)
class Spent:
    candidates: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    calls: int = 0
    seconds: float = 0.0


@dataclass
class CampaignState:
    campaign: str
    base_rev: str
    attempts: list[Attempt]
    # (candidate id, commit) per accepted link, in order.
    chain: list[tuple[int, str]]
    spent: Spent
    # (parent revision, function) -> CauseViews the analyst gave.
    causes: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    # (parent revision, function) -> rules no rewrite could be written for.
    no_rule: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    stability: dict[str, Any] | None = None
    concerns: list[str] = field(default_factory=list)
    # parent revision -> the advisor's "causes" event body at that parent.
    advice: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The explorer's "proposals" event body; None until the explorer was asked.
    exploration: dict[str, Any] | None = None
    # A cluster campaign's "dispatched" events (event id -> body), and the ids of those that
    # landed as a candidate or were abandoned.
    dispatched: dict[int, dict[str, Any]] = field(default_factory=dict)
    landed: set[int] = field(default_factory=set)
    # Accepts passed over for another accept of their wave (candidate -> the linked one), and
    # the passed-over candidates already judged again on a later parent.
    passed_over: dict[int, int] = field(default_factory=dict)
    carried: set[int] = field(default_factory=set)

    @property
    def head(self) -> str:
        return self.chain[-1][1] if self.chain else self.base_rev

    def unfinished(self) -> list[Attempt]:
        return [a for a in self.attempts if a.needs_judging or a.needs_finishing]

    def unlinked_accepts(self) -> list[Attempt]:
        """Accepted candidates against the head, neither linked nor passed over: the wave's
        accepts waiting for the link (one in a campaign that judges one candidate at a time)."""
        linked = {cid for cid, _ in self.chain}
        return [
            a
            for a in self.attempts
            if a.verdict == "accepted"
            and a.candidate_id not in linked
            and a.candidate_id not in self.passed_over
            and a.base_rev == self.head
        ]

    def pending_accept(self) -> Attempt | None:
        """The accept to link next (killed right after its verdict, or a wave with several):
        the largest `gain`, the earliest candidate on a tie."""
        waiting = self.unlinked_accepts()
        if not waiting:
            return None
        return max(waiting, key=lambda a: (a.gain, -a.candidate_id))

    def orphans(self) -> list[tuple[int, dict[str, Any]]]:
        """Dispatched proposals that never landed (the driver stopped while they were judged)."""
        return [(i, body) for i, body in self.dispatched.items() if i not in self.landed]

    def carries(self) -> list[Attempt]:
        """Passed-over accepts not yet judged again: they go first in the next wave."""
        return [
            a
            for a in self.attempts
            if a.candidate_id in self.passed_over and a.candidate_id not in self.carried
        ]

    def settled(self) -> list[Attempt]:
        """Attempts with an outcome, in order: what history, failures and repeats count."""
        return [a for a in self.attempts if a.invalid or a.verdict is not None]

    def history(self, redact: Redactor) -> list[dict[str, Any]]:
        views = [a.view(redact) for a in self.settled()]
        for (_, function), rules in self.no_rule.items():
            views.extend(
                {
                    "candidate_id": None,
                    "function": function,
                    "hypothesis": "no rewrite could be written for this rule",
                    "rule": rule,
                    "verdict": "invalid",
                    "reasons": ["the proposer could not write a rewrite"],
                    "diff_sha256": "",
                }
                for rule in rules
            )
        return views

    def flags(self, parent: str) -> list[dict[str, Any]]:
        return [c for (rev, _), causes in self.causes.items() if rev == parent for c in causes]

    def exhausted(self, parent: str) -> set[str]:
        return {function for rev, function in self.no_rule if rev == parent}


def load_state(
    ledger: Ledger, campaign: str, rules: PolicyRules, *, now: datetime
) -> CampaignState:
    """The campaign's state as its ledger has it at `now` (the end of the running session)."""
    record = ledger.campaign(campaign)
    if record is None:
        raise KeyError(campaign)
    events = ledger.events(campaign)
    told = {e["candidate_id"]: e["body"] for e in events if e["kind"] == "candidate"}
    superseded = {b["rejudge_of"] for b in told.values() if b.get("rejudge_of") is not None}
    superseded |= {
        e["body"]["candidate"]
        for e in events
        if e["kind"] == "note" and e["body"].get("what") == "abandoned"
    }
    attempts = [
        _attempt(row, told.get(row["id"], {}), gates, bodies, rules)
        for row, gates, bodies in _rows(ledger, campaign)
        if row["id"] not in superseded
    ]
    chain = [
        (int(e["candidate_id"]), str(e["body"]["commit"]))
        for e in events
        if e["kind"] == "accepted"
    ]
    state = CampaignState(
        campaign=campaign,
        base_rev=record["base_rev"],
        attempts=attempts,
        chain=chain,
        spent=_spent(ledger, campaign, events, len(attempts), now),
        concerns=_concerns(ledger, campaign),
    )
    for event in events:
        _read_event(state, event["kind"], event["body"])
    _read_dispatches(state, events, told)
    return state


def _read_dispatches(
    state: CampaignState, events: list[dict[str, Any]], told: dict[int, dict[str, Any]]
) -> None:
    state.dispatched = {int(e["id"]): e["body"] for e in events if e["kind"] == "dispatched"}
    state.landed = {int(b["dispatch"]) for b in told.values() if b.get("dispatch") is not None}
    for event in events:
        body = event["body"]
        if event["kind"] != "note" or not isinstance(body, dict):
            continue
        if body.get("what") == "dispatch-abandoned":
            state.landed.add(int(body["dispatch"]))
        elif body.get("what") == "passed-over":
            state.passed_over[int(body["candidate"])] = int(body["linked"])
    # Carried: judged again already, or being judged again (an orphan, judged again on resume).
    waiting = [body["records"].get("event") or {} for _, body in state.orphans()]
    state.carried = {
        int(b["carried_from"]) for b in [*told.values(), *waiting] if b.get("carried_from")
    }


def _read_event(state: CampaignState, kind: str, body: Any) -> None:
    what = body.get("what") if isinstance(body, dict) else None
    if kind == "note":
        _note(state, body)
    elif kind == "advisor" and what == "causes":
        state.advice[str(body["parent"])] = body
    elif kind == "explorer" and what == "proposals" and state.exploration is None:
        state.exploration = body


def _note(state: CampaignState, body: dict[str, Any]) -> None:
    what = body.get("what")
    if what == "causes":
        state.causes[(body["parent"], body["function"])] = list(body["causes"])
    elif what == "no-rule":
        key = (body["parent"], body["function"])
        state.no_rule[key] = [*state.no_rule.get(key, []), *body.get("rules", [])]
    elif what == "a/a":
        state.stability = body


def _rows(
    ledger: Ledger, campaign: str
) -> Iterable[tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]]:
    rows = ledger.query(
        "SELECT c.id, c.base_rev, c.diff, c.patch_sha256, c.facts, v.verdict, v.reasons,"
        " v.error, v.candidate_id IS NOT NULL AS finished FROM candidates c"
        " LEFT JOIN verdicts v ON v.candidate_id = c.id WHERE c.campaign = ? ORDER BY c.id",
        (campaign,),
    )
    gates: dict[int, list[dict[str, Any]]] = {}
    for gate in ledger.query(
        "SELECT g.candidate_id, g.name, g.passed, g.detail FROM gates g"
        " JOIN candidates c ON c.id = g.candidate_id WHERE c.campaign = ? ORDER BY g.id",
        (campaign,),
    ):
        gates.setdefault(gate["candidate_id"], []).append(gate)
    bodies: dict[int, list[dict[str, Any]]] = {}
    for row in ledger.query(
        "SELECT k.candidate_id, k.body FROM comparisons k"
        " JOIN candidates c ON c.id = k.candidate_id WHERE c.campaign = ?",
        (campaign,),
    ):
        bodies.setdefault(row["candidate_id"], []).append(json.loads(row["body"]))
    for row in rows:
        yield row, gates.get(row["id"], []), bodies.get(row["id"], [])


def _attempt(
    row: dict[str, Any],
    told: dict[str, Any],
    gates: list[dict[str, Any]],
    bodies: list[dict[str, Any]],
    rules: PolicyRules,
) -> Attempt:
    facts = json.loads(row["facts"])
    review = told.get("review")
    verdict = row["verdict"]
    return Attempt(
        candidate_id=int(row["id"]),
        function=str(told.get("function") or ""),
        hypothesis=str(told.get("hypothesis") or ""),
        rule=told.get("rule"),
        diff=row["diff"],
        diff_sha256=row["patch_sha256"],
        base_rev=row["base_rev"],
        invalid="rejection" in facts,
        finished=bool(row["finished"]),
        verdict=verdict,
        error=row["error"],
        reasons=tuple(json.loads(row["reasons"])) if row["reasons"] else (),
        objected=None if not review else review.get("recommendation") == "reconsider",
        tests_failed=_failed_reasons(gates, (TESTS_GATE,)),
        guard_protected=any(
            reason.startswith(PROTECTED_RULE + ":")
            for reason in _failed_reasons(gates, GUARD_GATES)
        ),
        breaches=_breaches(bodies, rules) if verdict == "rejected" else (),
        readings=_readings(bodies, rules),
        rejection=facts.get("rejection"),
    )


def _failed_reasons(gates: list[dict[str, Any]], names: tuple[str, ...]) -> tuple[str, ...]:
    found: list[str] = []
    for gate in gates:
        if gate["name"] in names and not gate["passed"]:
            found.extend(str(r) for r in json.loads(gate["detail"]).get("reasons", []))
    return tuple(sorted(found))


def _improvement(body: dict[str, Any]) -> float | None:
    delta = body.get("delta_pct")
    if not isinstance(delta, int | float) or not math.isfinite(delta):
        return None
    return -float(delta) if body.get("lower_is_better", True) else float(delta)


def _breaches(bodies: list[dict[str, Any]], rules: PolicyRules) -> tuple[str, ...]:
    """Guardrail (protected) metrics a rejected candidate worsened beyond their limit.

    The same reading the policy rejects on: a guardrail metric, not the primary one, on a
    guarded tier, worse than its limit, and significant when statistical support is required.
    """
    found = []
    for body in bodies:
        metric = body["metric"]
        improvement = _improvement(body)
        if (
            metric == rules.primary_metric
            or metric not in rules.guardrails
            or body["tier"] not in GUARDED_TIERS
            or improvement is None
            or improvement >= -rules.limit_for(metric)
            or (rules.statistical_support_required and not body["significant"])
        ):
            continue
        found.append(f"{metric} on workload {body['workload']}")
    return tuple(sorted(found))


def _readings(bodies: list[dict[str, Any]], rules: PolicyRules) -> tuple[Reading, ...]:
    found = []
    for body in bodies:
        if body["metric"] != rules.primary_metric or body["tier"] != "representative":
            continue
        base, cand = body.get("baseline_mean"), body.get("candidate_mean")
        if not isinstance(base, int | float) or not isinstance(cand, int | float):
            continue
        if not (math.isfinite(base) and math.isfinite(cand)) or base == 0:
            continue
        found.append(
            Reading(body["workload"], float(base), float(cand), bool(body["lower_is_better"]))
        )
    return tuple(found)


def _spent(
    ledger: Ledger, campaign: str, events: list[dict[str, Any]], candidates: int, now: datetime
) -> Spent:
    calls = ledger.query(
        "SELECT COUNT(*) AS calls, COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens,"
        " COALESCE(SUM(cost_usd), 0.0) AS cost, COALESCE(SUM(cost_usd IS NULL), 0) AS unpriced"
        " FROM role_calls WHERE campaign = ?",
        (campaign,),
    )[0]
    return Spent(
        candidates=candidates,
        tokens=int(calls["tokens"]),
        cost_usd=float(calls["cost"]),
        unpriced_calls=int(calls["unpriced"]),
        calls=int(calls["calls"]),
        seconds=_seconds(ledger, campaign, events, now),
    )


def _seconds(ledger: Ledger, campaign: str, events: list[dict[str, Any]], now: datetime) -> float:
    """Time spent across sessions: each earlier session counts to the last record it wrote.

    A session is a start or resume event up to the next one; a session killed outright wrote no
    end, so its last row in any table (an event, a role call, a candidate, a gate, a verdict)
    marks it. The running session counts to `now`.
    """
    starts = [e["created_at"] for e in events if e["kind"] in ("start", "resume")]
    if not starts:
        return 0.0
    stamps = sorted(
        row["created_at"]
        for row in ledger.query(
            "SELECT created_at FROM events WHERE campaign = ?"
            " UNION ALL SELECT created_at FROM role_calls WHERE campaign = ?"
            " UNION ALL SELECT created_at FROM candidates WHERE campaign = ?"
            " UNION ALL SELECT g.created_at FROM gates g JOIN candidates c"
            " ON c.id = g.candidate_id WHERE c.campaign = ?"
            " UNION ALL SELECT v.created_at FROM verdicts v JOIN candidates c"
            " ON c.id = v.candidate_id WHERE c.campaign = ?",
            (campaign,) * 5,
        )
    )
    total = 0.0
    for start, following in zip(starts, [*starts[1:], None], strict=True):
        if following is None:
            end = now
        else:
            inside = [s for s in stamps if start <= s < following]
            end = datetime.fromisoformat(inside[-1] if inside else start)
        total += max(0.0, (end - datetime.fromisoformat(start)).total_seconds())
    return total


def _concerns(ledger: Ledger, campaign: str) -> list[str]:
    rows = ledger.query(
        "SELECT k.candidate_id, k.severity, k.text FROM concerns k"
        " JOIN candidates c ON c.id = k.candidate_id WHERE c.campaign = ? ORDER BY k.id",
        (campaign,),
    )
    seen: dict[str, None] = {}
    for row in rows:
        seen.setdefault(f"candidate {row['candidate_id']} ({row['severity']}): {row['text']}")
    return list(seen)[-MAX_CONCERNS_SHOWN:]
