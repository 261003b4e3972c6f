"""`speedproof verify`: measure accepted candidates again, with more pairs, alone and stacked.

An accept was measured once, against one base, on one afternoon's machine. Verification takes
each accepted candidate's recorded diff and judges it again through the whole path (guard,
build, tests, behaviour, measurement) against the base it was accepted on, under the judge's own
sequential rule with twice its time budget and pair cap (`VERIFY_BUDGET_MULTIPLE`), or a fixed
schedule of `pairs` pairs when asked; then all the accepted
diffs applied in order, stacked, against the first one's base: wins that each held alone can
overlap, or cancel, once they are together.

A candidate whose re-judgement is not `accepted` is flagged: it is listed as not holding, the
flag is an event in the ledger next to the original candidate, and the command exits 1. Nothing
is ever dropped or rewritten silently: the original verdict stays as it was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from speedproof.ground.errors import PatchError, SpeedproofError
from speedproof.ground.git import git_ok
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.measure.sequential_rule import Progress, say_nothing
from speedproof.judge.outcome import Outcome
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import worktree
from speedproof.ledger import Ledger
from speedproof.manifest_loading import LoadedManifest

# Twice the judge's budget: a true win near the floor, which the judge accepted at the front of
# its reading's spread, needs more pairs to be seen again at its true size than to be seen once
# (docs/adr/0042).
VERIFY_BUDGET_MULTIPLE = 2.0


def verify_options(
    base: str, pairs: int | None, campaign: str | None, holdout_dir: Path | None = None
) -> JudgeOptions:
    """How `verify` judges a claim again: twice the judge's budget, and measured to the last
    look, never stopped early. With the early stop, verify kept 25 of 30 injected 4 % wins and
    all 5 it lost had stopped at 60-170 pairs, 4 of them on first pairs that read the win at
    -1 to +1 %; without it, a fresh record kept 27 of 30 in 149 pairs on average
    (docs/adr/0053)."""
    return JudgeOptions(
        base=base,
        pairs=pairs,
        budget_multiple=VERIFY_BUDGET_MULTIPLE,
        stops_early=False,
        origin="verify",
        campaign=campaign,
        holdout_dir=holdout_dir,
    )


# "elsewhere": alone, on another node of a cluster than the one that accepted it (`elsewhere`).
Mode = Literal["alone", "stacked", "elsewhere"]


@dataclass(frozen=True)
class Accepted:
    """An accepted candidate as the ledger recorded it."""

    id: int
    base_rev: str
    diff: str
    rests_on: str | None
    campaign: str | None
    # The node that judged it, when a cluster did (`facts["node"]`, `cluster.judging`).
    node: dict[str, Any] | None = None


@dataclass(frozen=True)
class Recheck:
    mode: Mode
    candidates: tuple[int, ...]
    base_rev: str
    verdict: str
    holds: bool
    ledger_id: int | None
    figure: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "candidates": list(self.candidates),
            "base_rev": self.base_rev,
            "verdict": self.verdict,
            "holds": self.holds,
            "ledger_id": self.ledger_id,
            "figure": self.figure,
            "reasons": list(self.reasons),
        }


def accepted_candidates(
    ledger: Ledger, *, campaign: str | None = None, ids: Sequence[int] = ()
) -> list[Accepted]:
    """Accepted candidates in the order they were judged (never earlier verifications)."""
    sql = (
        "SELECT c.id, c.base_rev, c.diff, v.rests_on, c.campaign, c.facts FROM candidates c"
        " JOIN verdicts v ON v.candidate_id = c.id"
        " WHERE v.verdict = 'accepted' AND c.origin != 'verify'"
    )
    params: list[Any] = []
    if campaign is not None:
        sql += " AND c.campaign = ?"
        params.append(campaign)
    rows = ledger.query(sql + " ORDER BY c.id", params)
    found = [
        Accepted(r["id"], r["base_rev"], r["diff"], r["rests_on"], r["campaign"], _node(r["facts"]))
        for r in rows
    ]
    if ids:
        missing = sorted(set(ids) - {a.id for a in found})
        if missing:
            raise SpeedproofError(
                f"not accepted candidates in this ledger: {', '.join(map(str, missing))}"
            )
        found = [a for a in found if a.id in ids]
    return found


def _node(facts: str) -> dict[str, Any] | None:
    node = json.loads(facts).get("node")
    return node if isinstance(node, dict) and node.get("id") else None


class Verification:
    """Re-judges accepted candidates with a larger schedule."""

    def __init__(
        self,
        loaded: LoadedManifest,
        *,
        sandbox: Sandbox,
        ledger: Ledger,
        pairs: int | None = None,
        progress: Progress = say_nothing,
        holdout_dir: Path | None = None,
    ) -> None:
        self.loaded = loaded
        self.sandbox = sandbox
        self.ledger = ledger
        self.pairs = pairs
        self.progress = progress
        self.holdout_dir = holdout_dir

    def run(self, accepted: Sequence[Accepted]) -> list[Recheck]:
        if not accepted:
            raise SpeedproofError("no accepted candidate to verify in this ledger")
        checks = [self._alone(candidate) for candidate in accepted]
        if len(accepted) > 1:
            checks.append(self._stacked(accepted))
        return checks

    def _judge(self, base: str, diff: str, campaign: str | None) -> Outcome:
        options = verify_options(base, self.pairs, campaign, self.holdout_dir)
        judge = Judge(
            self.loaded,
            sandbox=self.sandbox,
            ledger=self.ledger,
            options=options,
            progress=self.progress,
        )
        return judge.judge(diff)

    def _alone(self, candidate: Accepted) -> Recheck:
        how = "twice the judge's time budget" if self.pairs is None else f"{self.pairs} pairs"
        self.progress("verify", f"candidate {candidate.id} alone, {how}")
        outcome = self._judge(candidate.base_rev, candidate.diff, candidate.campaign)
        return self._record(
            "alone", (candidate.id,), candidate.base_rev, outcome, candidate.campaign
        )

    def _stacked(self, accepted: Sequence[Accepted]) -> Recheck:
        ids = tuple(a.id for a in accepted)
        base = accepted[0].base_rev
        campaign = accepted[0].campaign
        self.progress("verify", f"{len(ids)} candidates stacked on {base[:12]}")
        try:
            diff = stack_diffs(self.loaded, base, [a.diff for a in accepted])
        except PatchError as exc:
            check = Recheck("stacked", ids, base, "not built", False, None, "", (str(exc),))
            self._flag(check, campaign)
            return check
        return self._record("stacked", ids, base, self._judge(base, diff, campaign), campaign)

    def _record(
        self,
        mode: Mode,
        ids: tuple[int, ...],
        base: str,
        outcome: Outcome,
        campaign: str | None,
    ) -> Recheck:
        verdict = outcome.verdict
        figure = next(
            (c.render() for c in outcome.comparisons if c.workload == verdict.rests_on), ""
        )
        check = Recheck(
            mode,
            ids,
            base,
            verdict.verdict,
            verdict.verdict == "accepted",
            outcome.ledger_id,
            figure,
            verdict.reasons,
        )
        self._flag(check, campaign)
        return check

    def _flag(self, check: Recheck, campaign: str | None) -> None:
        kind = "verified" if check.holds else "no-longer-holds"
        for candidate in check.candidates:
            self.ledger.add_event(campaign, kind, check.to_json(), candidate_id=candidate)


def stack_diffs(loaded: LoadedManifest, base: str, diffs: Sequence[str]) -> str:
    """All `diffs` applied in order on `base`, as one diff against `base`."""
    with worktree(loaded.root, base) as tree:
        for number, diff in enumerate(diffs, start=1):
            try:
                apply_patch(tree.path, normalise_patch(diff))
            except PatchError as exc:
                raise PatchError(f"diff {number} of {len(diffs)} does not stack: {exc}") from exc
        git_ok(tree.path, "add", "-A")
        return git_ok(tree.path, "diff", "--cached", "--binary", base).decode(
            "utf-8", "surrogateescape"
        )
