"""The report's data: everything a campaign report shows, read once from the ledger.

`ReportData` is the JSON version of the report (`report.json`) and the only input of the HTML
and Markdown renderers, so the three versions cannot disagree. Every float that the ledger may
hold as NaN or infinity (a relative change against a zero baseline) is `None` here with the
reason in `note`, because JSON has no such numbers and a round trip must give the model back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# 2: the advisor's flags and hazards, and the explorer's proposals.
# 3: discovery's hot functions per parent, and why nothing was proposed for each.
REPORT_SCHEMA = 3

Status = Literal["accepted", "rejected", "inconclusive", "error", "unfinished"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Gate(_Model):
    name: str
    passed: bool
    duration_s: float
    reasons: list[str]
    # The rest of the gate's record (instruction counts, failing test names …), as written.
    detail: dict[str, Any]


class Reading(_Model):
    """One comparison of the ledger: one metric on one workload, baseline against candidate."""

    workload: str
    metric: str
    tier: str
    lane: str
    n_baseline: int
    n_candidate: int
    baseline_mean: float | None
    candidate_mean: float | None
    delta_pct: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    significant: bool
    supported: bool
    exact: bool
    lower_is_better: bool
    note: str

    @property
    def improvement_pct(self) -> float | None:
        if self.delta_pct is None:
            return None
        return -self.delta_pct if self.lower_is_better else self.delta_pct


class Distribution(_Model):
    """The raw values of one metric on one workload, a list a side, in the metric's own unit.

    `baseline` and `candidate` hold the samples the analysis used. A round measured again
    because the machine was contended stays in the ledger; its samples are kept apart in the
    `left_out_*` lists so a plot can show them without mixing them into what was judged.
    """

    workload: str
    metric: str
    unit: str
    baseline: list[float]
    candidate: list[float]
    left_out_baseline: list[float]
    left_out_candidate: list[float]
    series: int = Field(description="how many measurement series the values come from")


class RoleCall(_Model):
    created_at: str
    role: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_s: float
    ok: bool
    rejection: str | None


class Concern(_Model):
    created_at: str
    source: str
    severity: str
    text: str


class Proposal(_Model):
    """What the optimizer said it was doing; advice only, shown beside what was proven."""

    hypothesis: str | None = None
    rule: str | None = None
    function: str | None = None


class AdvisorCause(_Model):
    """One cause question the advisor answered about a function: flagged, or flagged and then
    overruled by code (`veto`, with the reason)."""

    cause: str
    probability: float
    # Standard deviations above the build's usual answer to this question.
    z: float
    veto: str | None
    evidence: list[str]


class AdvisorFunction(_Model):
    function: str
    self_pct: float
    # The ranking score code computed from the flags and the self share, and its place.
    score: float
    rank: int
    flagged: list[AdvisorCause]
    vetoed: list[AdvisorCause]


class AdvisorParent(_Model):
    """The advisor's cause flags about the hot functions of one parent revision; advice that
    ordered the coordinator's targets and never reached a verdict."""

    created_at: str
    parent: str
    # The accepted candidate that made this revision; None for the campaign's base.
    parent_candidate: int | None
    model: str
    # In rank order; functions the advisor was not asked about are left out.
    functions: list[AdvisorFunction]


class AdvisorHazard(_Model):
    hazard: str
    probability: float
    z: float
    evidence: list[str]


class AdvisorReview(_Model):
    """The advisor's hazard questions about one candidate diff; the flagged ones are also the
    candidate's concerns of source "advisor"."""

    model: str
    function: str
    asked: int
    flagged: list[AdvisorHazard]


class ExplorerProposal(_Model):
    id: str
    args: list[str]
    rationale: str
    accepted: bool
    reason: str | None


class DroppedWorkload(_Model):
    id: str
    reason: str


class ExplorerProfile(_Model):
    """The workloads one parent revision was profiled on: representative and explorer ones."""

    created_at: str
    parent: str
    workloads: list[str]
    extra: list[str]
    dropped: list[DroppedWorkload]


class Exploration(_Model):
    """The explorer's proposals (asked once a campaign) and the profiles they widened; explorer
    workloads are profiled only, never measured."""

    created_at: str
    parent: str
    rejection: str | None
    proposals: list[ExplorerProposal]
    profiles: list[ExplorerProfile]


class ProposerOutcome(_Model):
    """What the proposer did with a hot function: one rule's outcome (`rule` set: the rewrite
    it writes, or why it writes none) or a role's own answer (`rule` None)."""

    role: str
    rule: str | None
    proposed: bool
    reason: str


class HotFunction(_Model):
    rank: int
    name: str
    file: str
    start_line: int
    end_line: int
    # Shares of the whole profile, in percent (see docs/adr/0022-discovery-profilers.md).
    self_pct: float
    cum_pct: float
    samples: int
    outcomes: list[ProposerOutcome]
    # Candidates proposed for this function while this discovery was the current one.
    candidates: list[int]

    @property
    def proposing(self) -> list[str]:
        """The rules that write a rewrite for the function."""
        return [o.rule for o in self.outcomes if o.proposed and o.rule]


class Discovery(_Model):
    """One profiling of a parent revision: its hot functions, hottest first, and the answers
    that covered all of them at once (the coordinator's "nothing left")."""

    created_at: str
    parent: str
    # The accepted candidate that made this revision; None for the campaign's base.
    parent_candidate: int | None
    profiler: str
    # What `HotFunction.samples` counts: CPU samples (pprof) or calls (cProfile).
    unit: str
    workloads: list[str]
    notes: list[str]
    functions: list[HotFunction]
    outcomes: list[ProposerOutcome]


class Candidate(_Model):
    id: int
    created_at: str
    finished_at: str | None
    campaign: str | None
    origin: str
    target: str
    base_rev: str
    patch_sha256: str
    diff: str
    sandbox: str
    status: Status
    verdict: str | None
    # The policy's reasons followed by its notes, as the ledger keeps them.
    reasons: list[str]
    rests_on: str | None
    lane: str | None
    error: str | None
    timings: dict[str, float]
    # The accepted candidate this one was measured against; None for the campaign's base.
    parent: int | None
    proposal: Proposal
    gates: list[Gate]
    readings: list[Reading]
    distributions: list[Distribution]
    concerns: list[Concern]
    role_calls: list[RoleCall]
    facts: dict[str, Any]
    advisor: AdvisorReview | None = None

    def measured_on(self) -> str | None:
        """The machine facts the judge recorded, in one line (None when it recorded none)."""
        machine = self.facts.get("machine")
        if not isinstance(machine, dict):
            return None
        load = machine.get("load_1m")
        words = [
            f"{machine.get('cpu_model', 'unknown CPU')}",
            f"{machine.get('cores', '?')} of {machine.get('online_cores', '?')} cores",
            f"governor {machine.get('governor', 'unknown')}",
            f"1-minute load {load:.2f}" if isinstance(load, int | float) else "load unknown",
        ]
        pinned = self.facts.get("timed_cpus")
        if pinned is not None:
            words.append(f"timed on {pinned}")
        return ", ".join(words)


class Event(_Model):
    created_at: str
    kind: str
    candidate_id: int | None
    body: Any

    @property
    def shown(self) -> Any:
        """The body as the event log shows it. A proposal dispatched to a node carries its whole
        diff and role-call records (prompts and answers); the log names what it is instead, and
        report.json and the ledger keep it whole."""
        if self.kind != "dispatched" or not isinstance(self.body, dict):
            return self.body
        records = self.body.get("records") or {}
        event = records.get("event") or {}
        return {
            "parent": self.body.get("parent"),
            "function": event.get("function"),
            "rule": event.get("rule"),
            "diff_lines": len(str(self.body.get("diff", "")).splitlines()),
            "role_calls": len(records.get("calls") or []),
        }


class ExitCondition(_Model):
    condition: str
    message: str
    created_at: str


class RoleCost(_Model):
    """The calls of one role (or the whole campaign, as role "total")."""

    role: str
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    # The sum of the calls whose cost is known; `unpriced` calls had no known price.
    cost_usd: float
    unpriced: int
    duration_s: float


class ChainStep(_Model):
    """One accepted candidate of the chain and the reading its accept rests on."""

    candidate_id: int
    metric: str | None
    workload: str | None
    improvement_pct: float | None


class Cumulative(_Model):
    """The accepted chain's change on one workload: the product of its steps' mean ratios."""

    workload: str
    metric: str
    # Steps of the chain that measured this workload, out of all steps.
    steps: int
    of_steps: int
    first_baseline_mean: float
    # Positive is better, in the metric's own direction.
    improvement_pct: float


class Chain(_Model):
    steps: list[ChainStep]
    cumulative: list[Cumulative]


class Campaign(_Model):
    # None groups the candidates judged outside any campaign (`speedproof judge`).
    id: str | None
    created_at: str | None
    target: str | None
    repo: str | None
    base_rev: str | None
    options: dict[str, Any]
    exit: ExitCondition | None
    events: list[Event]
    candidates: list[Candidate]
    costs: list[RoleCost]
    chain: Chain
    advisor: list[AdvisorParent] = []
    explorer: Exploration | None = None
    discovery: list[Discovery] = []

    def count(self, status: Status) -> int:
        return sum(1 for c in self.candidates if c.status == status)

    @property
    def stability(self) -> dict[str, Any] | None:
        """The opening A/A check's record (the base against itself), if the campaign ran one."""
        for event in self.events:
            if isinstance(event.body, dict) and event.body.get("what") == "a/a":
                return event.body
        return None


class ReportData(_Model):
    schema_version: int = REPORT_SCHEMA
    generated_at: str
    ledger: str
    campaigns: list[Campaign]
