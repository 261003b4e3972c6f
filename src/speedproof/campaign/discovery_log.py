"""What discovery found at each parent revision, and why the proposer proposed nothing, in the
ledger.

Each profiling of a parent is one `discoveries` row with its ranked `hot_functions` (name,
file, lines, self and cumulative share). With the heuristic proposer, every rule's outcome on
every hot function follows at once (`proposer_outcomes`, role "optimizer"): the rewrite it
writes, or why it writes none, from `agents.heuristic.survey` run on the function and its whole
file exactly as the optimizer is shown them. A role's own answers are added as they come: the
coordinator's "nothing left" (for every function) and the optimizer's "no rule applies" (for
one). The report and the end-of-campaign summary read them back, so a campaign that judged
nothing still says what it looked at and why it stopped.
"""

from __future__ import annotations

from typing import cast

from speedproof.agents.heuristic.subject import Subject
from speedproof.agents.heuristic.survey import survey
from speedproof.campaign.checkout import ParentCheckout
from speedproof.campaign.state import CampaignState
from speedproof.discovery import HotFunction
from speedproof.ground.errors import InfrastructureError
from speedproof.ledger import HotFunctionRow, Ledger, ProposerOutcome
from speedproof.report.discovery import discoveries, summary_lines
from speedproof.source.function import Language

EVERY_FUNCTION = ""  # the function of an outcome that holds for every hot function


class DiscoveryLog:
    """Writes one campaign's discoveries and proposer outcomes; `current` is the discovery the
    running iteration works from (None before the first profiling)."""

    def __init__(self, ledger: Ledger, campaign: str, language: str, *, rules: bool) -> None:
        self.ledger = ledger
        self.campaign = campaign
        self.language = language
        # Run the heuristic rules' survey on every hot function (the proposer is the heuristic).
        self.rules = rules
        self.current: int | None = None

    def profiled(self, parent: ParentCheckout) -> int:
        profile = parent.profile
        rows = [_row(rank, f) for rank, f in enumerate(profile.functions, start=1)]
        self.current = self.ledger.add_discovery(
            self.campaign,
            parent=parent.rev,
            profiler=profile.profiler,
            unit=profile.unit,
            total=profile.total,
            workloads=profile.workloads,
            notes=profile.notes,
            functions=rows,
        )
        if self.rules:
            outcomes = [o for f in profile.functions for o in self._surveyed(parent, f)]
            self.ledger.add_outcomes(self.current, outcomes)
        return self.current

    def _surveyed(self, parent: ParentCheckout, function: HotFunction) -> list[ProposerOutcome]:
        try:
            text = parent.file_text(function.file)
        except InfrastructureError as exc:
            reason = f"its file cannot be read: {exc}"
            return [ProposerOutcome(function.name, "optimizer", None, False, reason)]
        subject = Subject(
            name=function.name,
            file=function.file,
            language=cast(Language, self.language),  # survey() answers other languages itself
            source=function.source,
            start_line=function.start_line,
            end_line=function.end_line,
            file_text=text,
        )
        return [
            ProposerOutcome(function.name, "optimizer", o.rule or None, o.proposed, o.reason)
            for o in survey(subject)
        ]

    def outcome(self, function: str, role: str, reason: str) -> None:
        """A role's answer (or the campaign's own finding) that proposed nothing for `function`
        (EVERY_FUNCTION: for all of them, like the coordinator's "nothing left")."""
        if self.current is not None:
            outcome = ProposerOutcome(function, role, None, False, reason)
            self.ledger.add_outcomes(self.current, [outcome])


def _row(rank: int, function: HotFunction) -> HotFunctionRow:
    return HotFunctionRow(
        rank=rank,
        name=function.name,
        file=function.file,
        start_line=function.start_line,
        end_line=function.end_line,
        self_pct=function.self_pct,
        cum_pct=function.cum_pct,
        samples=function.samples,
    )


def summary(ledger: Ledger, state: CampaignState) -> list[str]:
    """The campaign's last discovery for the end-of-campaign summary: its hot functions with
    their shares and what became of each, and when no candidate was judged, why each rule and
    role proposed nothing."""
    found = ledger.discoveries(state.campaign)
    if not found:
        return []
    last = found[-1]
    (read,) = discoveries([last], last["functions"], last["outcomes"], [], [])
    proposed: dict[str, list[int]] = {}
    for attempt in state.attempts:
        if attempt.base_rev == last["parent"] and attempt.function:
            proposed.setdefault(attempt.function, []).append(attempt.candidate_id)
    functions = [
        f.model_copy(update={"candidates": proposed.get(f.name, [])}) for f in read.functions
    ]
    return summary_lines(
        read.model_copy(update={"functions": functions}), judged=bool(state.settled())
    )
