"""The "candidate" event each proposal's row carries, and the named rejection: a proposal that
never reached the judge (an answer that cannot be used, an edit that cannot be made), recorded as
a candidate row with the rejection as its reason, never a crash."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speedproof.agents.answers import OptimizerAnswer
from speedproof.campaign.records import sha256
from speedproof.discovery import HotFunction
from speedproof.ledger import Ledger


@dataclass(frozen=True)
class Proposal:
    """A change ready to judge, with what the candidate event says about it."""

    function: HotFunction
    answer: OptimizerAnswer
    patch: str
    diff_sha256: str


def judged_event(
    parent_rev: str, proposal: Proposal, summary: dict[str, Any] | None, rejection: str | None
) -> dict[str, Any]:
    """The event of a proposal that goes to the judge, with its review's summary."""
    answer = proposal.answer
    return {
        "function": proposal.function.name,
        "hypothesis": answer.hypothesis,
        "rule": answer.rule,
        "invalid": False,
        "diff_sha256": proposal.diff_sha256,
        "parent": parent_rev,
        "review": summary,
        "review_rejection": rejection,
        "rejudge_of": None,
    }


def unjudged_diff(answer: OptimizerAnswer | None) -> str:
    """The diff an answer carried, when it was one; "" for any other answer or none."""
    return (answer.diff or "") if answer is not None and answer.kind == "diff" else ""


def rejection_event(
    parent_rev: str, function: str, answer: OptimizerAnswer | None
) -> dict[str, Any]:
    """The "candidate" event a named rejection's row carries."""
    return {
        "function": function,
        "hypothesis": answer.hypothesis if answer is not None else "",
        "rule": answer.rule if answer is not None else None,
        "invalid": True,
        "diff_sha256": sha256(unjudged_diff(answer)),
        "parent": parent_rev,
        "review": None,
        "rejudge_of": None,
    }


def record_rejection(
    ledger: Ledger,
    *,
    origin: str,
    campaign: str,
    target: str,
    repo: Path,
    sandbox: str,
    parent_rev: str,
    diff: str,
    reason: str,
    gate: str,
) -> int:
    """The rejected candidate's row, its one failed gate and its verdict; its id."""
    candidate_id = ledger.start_candidate(
        origin=origin,
        campaign=campaign,
        target=target,
        repo=repo,
        base_rev=parent_rev,
        patch_sha256=sha256(diff),
        diff=diff,
        sandbox=sandbox,
        facts={"rejection": reason, "gate": gate},
    )
    ledger.add_gate(candidate_id, gate, False, 0.0, {"reasons": [reason]})
    ledger.finish(
        candidate_id,
        verdict="rejected",
        reasons=[f"named rejection: {reason}"],
        rests_on=None,
        lane=None,
        timings={},
    )
    return candidate_id
