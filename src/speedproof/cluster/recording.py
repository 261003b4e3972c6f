"""A ledger stand-in for a judgement on a node, and the replay of what it recorded.

Workers never write the ledger: it is one SQLite file on the driver. A judge on a node writes to
a `RecordingLedger` instead, which keeps each of the judge's six writes (start_candidate,
add_gate, add_commands, add_samples, add_comparisons, finish) in order, with a stand-in
candidate id (negative, so it can never pass for a row). The job returns the calls; the driver
replays them into its ledger in one transaction. A job whose worker died half-way returned
nothing and wrote nothing, so the candidate its rerun records is the only one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.ledger import Ledger, SampleRow

# The writes a judgement makes after starting its candidate; each takes the candidate id first.
FOLLOWING = ("add_gate", "add_commands", "add_samples", "add_comparisons", "finish")


@dataclass(frozen=True)
class Call:
    """One write: the ledger method, the (stand-in) candidate it concerns, its other arguments."""

    method: str
    candidate: int
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


class RecordingLedger:
    """Keeps the judge's writes instead of making them (`ledger.CandidateWriter`)."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._started = 0

    def start_candidate(
        self,
        *,
        origin: str,
        target: str,
        repo: Path,
        base_rev: str,
        patch_sha256: str,
        diff: str,
        sandbox: str,
        facts: dict[str, Any],
        campaign: str | None = None,
    ) -> int:
        self._started -= 1
        given = {
            "origin": origin,
            "target": target,
            "repo": repo,
            "base_rev": base_rev,
            "patch_sha256": patch_sha256,
            "diff": diff,
            "sandbox": sandbox,
            "facts": dict(facts),
            "campaign": campaign,
        }
        self.calls.append(Call("start_candidate", self._started, (), given))
        return self._started

    def add_gate(
        self, candidate_id: int, name: str, passed: bool, duration_s: float, detail: Any
    ) -> None:
        self.calls.append(Call("add_gate", candidate_id, (name, passed, duration_s, detail)))

    def add_commands(
        self,
        candidate_id: int,
        stage: str,
        commands: Sequence[tuple[Sequence[str], int | None, float | None]],
    ) -> None:
        listed = [(list(argv), code, secs) for argv, code, secs in commands]
        self.calls.append(Call("add_commands", candidate_id, (stage, listed)))

    def add_samples(self, candidate_id: int, rows: Sequence[SampleRow]) -> None:
        self.calls.append(Call("add_samples", candidate_id, (list(rows),)))

    def add_comparisons(self, candidate_id: int, comparisons: Sequence[Any]) -> None:
        self.calls.append(Call("add_comparisons", candidate_id, (list(comparisons),)))

    def finish(
        self,
        candidate_id: int,
        *,
        verdict: str | None,
        reasons: Sequence[str],
        rests_on: str | None,
        lane: str | None,
        timings: dict[str, float],
        error: str | None = None,
    ) -> None:
        given = {
            "verdict": verdict,
            "reasons": list(reasons),
            "rests_on": rests_on,
            "lane": lane,
            "timings": dict(timings),
            "error": error,
        }
        self.calls.append(Call("finish", candidate_id, (), given))


def replay(calls: Sequence[Call], ledger: Ledger, *, repo: Path, node: dict[str, Any]) -> int:
    """Write `calls` into `ledger`, all in one transaction, and return the candidate's real id.

    The candidate row names the driver's repository (the node judged a copy in a folder that is
    gone now) and carries the node's facts under `facts["node"]`, in the same insert, so no
    candidate judged on a node is ever without them. `ledger.on_candidate` fires as it would for
    a judgement made here, inside the same transaction.
    """
    started = [call for call in calls if call.method == "start_candidate"]
    if len(started) != 1:
        raise InfrastructureError(f"a judgement came back with {len(started)} candidates, not 1")
    stand_in = started[0].candidate
    with ledger.transaction():
        facts = {**started[0].kwargs["facts"], "node": node}
        real = ledger.start_candidate(**{**started[0].kwargs, "repo": repo, "facts": facts})
        for call in calls:
            if call.method == "start_candidate":
                continue
            if call.method not in FOLLOWING or call.candidate != stand_in:
                raise InfrastructureError(f"a judgement came back with a stray {call.method!r}")
            getattr(ledger, call.method)(real, *call.args, **call.kwargs)
    return real
