"""Three decision rules for the timed lane, applied to prefixes of the same recorded stream.

One trial is one stream of ABBA pairs per representative workload (wall, CPU and peak memory of
both sides, pair by pair). Every rule reads a prefix of that stream, so the rules differ only in
how many pairs they look at and what they conclude, never in what the machine happened to do:

- `sequential_rule`: speedproof's rule, the judge's own code: `SequentialRule` (the one loop
  of `speedproof.judge.measure.sequential_rule`) replays the stream through `RecordedPairs`, look by
  look, at each look's level, until `policy.keep_measuring` has nothing left to ask; then
  `policy.decide`. A record holds representative workloads only, so the manifest it is scored
  against keeps only the recorded workloads (no holdouts, no twins are replayed).
- `anchor_rule`: the fixed rule of the system speedproof is measured against: 25 pairs, each
  metric compared unpaired with `stats.compare` but significant when Welch's p < 0.05 (not
  `compare`'s own "Mann-Whitney p < 0.05 or |t| > 2.2"); when there is doubt, defined as no
  representative workload's primary metric significantly changed at 25 pairs, 25 more pairs and
  the decision at 50. No Holm correction (the anchor has none).
- `mwu_rule`: 25 pairs, unpaired, significant when Mann-Whitney's p < 0.05 (benchstat's test),
  once.

The fixed rules go through `policy.decide` too, with the manifest's floor (3 %) and limit
(2 %) and its guardrails, so the only differences are the pairs read and the test behind each
`significant`. Pure: nothing here measures; `measurement_rules.py` records the streams.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from speedproof.judge.measure.readings import TIMED_METRICS
from speedproof.judge.measure.replay import RecordedPairs, RecordedWorkload, StreamError
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.measure.sequential_rule import SequentialRule
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Comparison, Evidence
from speedproof.manifest import Manifest
from speedproof.stats import Schedule, compare, paired_compare
from speedproof.stats.power import acceptance_probability
from speedproof.verify.verification import verify_options

# The fixed rules' horizon, and the level of their single test.
FIXED_PAIRS = 25
LEVEL = 0.05
# What a rule that does not apply to a trial (verify's, on a trial of another kind) says.
NOT_APPLIED = "n/a"
# A record made under an older rule can end before a newer rule decides (`--from-file`).
SHORT = "short"
# The known wins `verify`'s rule is scored on: the issue's "a true 4 % win".
VERIFY_WINS = (4.0,)
UnpairedTest = Literal["welch", "mwu"]


@dataclass(frozen=True)
class TrialStream:
    """One trial: its kind, the known win (0 for A/A), and one stream per workload."""

    trial: str
    kind: str
    win_pct: float
    workloads: tuple[RecordedWorkload, ...]
    contended: bool = False

    @property
    def label(self) -> str:
        return "a/a" if self.kind == "a/a" else f"win {self.win_pct:g} %"

    @property
    def pairs(self) -> int:
        return min(w.pairs for w in self.workloads)

    def prefix(self, pairs: int) -> TrialStream:
        return replace(self, workloads=tuple(w.prefix(pairs) for w in self.workloads))

    def recorded(self) -> RecordedPairs:
        return RecordedPairs({w.workload: w for w in self.workloads})


@dataclass(frozen=True)
class Outcome:
    """What one rule concluded on one trial, and how many pairs per workload it read."""

    verdict: str
    pairs: int
    looks: int
    reason: str


Rule = Callable[[TrialStream, Manifest], Outcome]


def _tiers(manifest: Manifest) -> dict[str, str]:
    return {w.id: w.tier for w in manifest.workloads}


def recorded_only(stream: TrialStream, manifest: Manifest) -> Manifest:
    """The manifest with only the workloads `stream` recorded: a record holds no holdouts."""
    recorded = {w.workload for w in stream.workloads}
    kept = [w for w in manifest.workloads if w.id in recorded]
    return manifest.model_copy(update={"workloads": kept})


def sequential_rule(schedule: Schedule, wins: Sequence[float] | None = None) -> Rule:
    """speedproof's rule: the judge's `SequentialRule` on the recorded pairs. A stream that ends
    before the rule does is a `StreamError` (the recorder then measures on). With `wins`, only
    trials of those known wins are judged; the others come out `n/a`."""

    def rule(stream: TrialStream, manifest: Manifest) -> Outcome:
        if wins is not None and (stream.kind == "a/a" or stream.win_pct not in wins):
            return Outcome(NOT_APPLIED, 0, 0, "")
        scored = recorded_only(stream, manifest)
        sequential = SequentialRule(scored, schedule, source=stream.recorded())
        evidence = sequential.run()
        verdict = decide(evidence, scored.rules())
        look = sequential.state.look
        pairs = sequential.schedule.pairs_at(look)
        return Outcome(verdict.verdict, pairs, look, verdict.reasons[0])

    return rule


def with_test(reading: Comparison, test: UnpairedTest) -> Comparison:
    """`reading` significant by one test alone at LEVEL; `supported` follows as `compare` has it.

    A reading with too few samples for a test (p absent) stays untested.
    """
    p = reading.p_welch if test == "welch" else reading.p_mannwhitney
    if p is None:
        return reading
    significant = p < LEVEL
    limit = dict(reading.extra).get("limit_pct")
    rules_out = False
    if limit is not None and reading.finite:
        high, low = reading.ci_high_pct, reading.ci_low_pct
        rules_out = high < limit if reading.lower_is_better else low > -limit
    return replace(
        reading,
        p_value=p,
        significant=significant,
        supported=reading.finite and (significant or rules_out),
    )


def unpaired_comparisons(
    stream: TrialStream, manifest: Manifest, test: UnpairedTest
) -> list[Comparison]:
    """Wall, CPU and memory of every workload, unpaired, each significant by `test` alone."""
    rules = manifest.rules()
    tiers = _tiers(manifest)
    found = []
    for w in stream.workloads:
        for metric in TIMED_METRICS:
            limit = rules.limit_for(metric)
            reading = compare(
                w.baseline[metric],
                w.candidate[metric],
                workload=w.workload,
                metric=metric,
                tier=tiers[w.workload],
                limit_pct=limit,
            )
            reading = replace(reading, extra=(*reading.extra, ("limit_pct", limit)))
            found.append(with_test(reading, test))
    return found


def fixed_evidence(comparisons: Iterable[Comparison]) -> Evidence:
    """One look that spends the whole level: what a fixed-horizon rule hands the policy."""
    return Evidence(
        behaviour_matches=True,
        failure_summary=(),
        safety_checks_passed=True,
        representative_evidence=True,
        comparisons=tuple(comparisons),
        look=1,
        final=True,
        alpha=LEVEL,
        # The fixed rules confirm nothing at a second look: counted as already confirmed, so
        # speedproof's two-look rule for changes near the floor or limit is not applied to them.
        earlier_accepts=1,
        earlier_rejects=1,
    )


def primary_changed(comparisons: Iterable[Comparison], primary: str) -> bool:
    """True when some representative workload's primary metric changed significantly."""
    return any(
        c.significant and c.metric == primary and c.tier == "representative" for c in comparisons
    )


def _fixed_outcome(comparisons: list[Comparison], manifest: Manifest, pairs: int) -> Outcome:
    verdict = decide(fixed_evidence(comparisons), manifest.rules())
    return Outcome(verdict.verdict, pairs, 1, verdict.reasons[0])


def anchor_rule(stream: TrialStream, manifest: Manifest, fixed: int = FIXED_PAIRS) -> Outcome:
    """25 pairs and Welch p < 0.05; in doubt (no significant primary change) 25 more, then 50."""
    first = unpaired_comparisons(stream.prefix(fixed), manifest, "welch")
    if primary_changed(first, manifest.rules().primary_metric):
        return _fixed_outcome(first, manifest, fixed)
    second = unpaired_comparisons(stream.prefix(2 * fixed), manifest, "welch")
    outcome = _fixed_outcome(second, manifest, 2 * fixed)
    return replace(outcome, looks=2)


def mwu_rule(stream: TrialStream, manifest: Manifest, fixed: int = FIXED_PAIRS) -> Outcome:
    """25 pairs, Mann-Whitney p < 0.05, decided once."""
    readings = unpaired_comparisons(stream.prefix(fixed), manifest, "mwu")
    return _fixed_outcome(readings, manifest, fixed)


def verify_schedule(manifest: Manifest) -> Schedule:
    """The schedule `verify` judges with (`verification.verify_options`)."""
    return verify_options("HEAD", None, None).schedule(manifest)


def rules_for(manifest: Manifest) -> dict[str, Rule]:
    """The rules under the names the table prints: the judge's own schedule for the manifest
    (time budget included), the fixed rules, and `verify`'s schedule on the 4 % wins."""
    return {
        "(a) speedproof sequential": sequential_rule(schedule_for(manifest)),
        "(b) anchor welch 25(+25)": anchor_rule,
        "(c) mwu 25": mwu_rule,
        "(d) speedproof verify": sequential_rule(verify_schedule(manifest), VERIFY_WINS),
    }


def decided(stream: TrialStream, manifest: Manifest, rules: Mapping[str, Rule]) -> bool:
    """True when every rule reaches its verdict within the pairs `stream` holds."""
    try:
        for rule in rules.values():
            rule(stream, manifest)
    except StreamError:
        return False
    return True


# ----- tallies ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One rule on one kind of trial: verdict counts, errors and pairs per workload."""

    trials: int
    accepted: int
    rejected: int
    inconclusive: int
    false_accepts: int
    false_rejects: int
    mean_pairs: float
    median_pairs: float
    # Trials whose record ends before this rule decides: left out of every count above.
    short: int = 0


def tally(kind: str, outcomes: Sequence[Outcome]) -> Cell:
    """Counts for one kind. Nothing measured here is slower: every reject is a false reject,
    and an accept is false on A/A (the two sides are the same program)."""
    short = sum(o.verdict == SHORT for o in outcomes)
    outcomes = [o for o in outcomes if o.verdict not in (NOT_APPLIED, SHORT)]
    verdicts = [o.verdict for o in outcomes]
    pairs = [o.pairs for o in outcomes]
    accepted = verdicts.count("accepted")
    rejected = verdicts.count("rejected")
    return Cell(
        trials=len(outcomes),
        accepted=accepted,
        rejected=rejected,
        inconclusive=verdicts.count("inconclusive"),
        false_accepts=accepted if kind == "a/a" else 0,
        false_rejects=rejected,
        mean_pairs=statistics.fmean(pairs) if pairs else math.nan,
        median_pairs=float(statistics.median(pairs)) if pairs else math.nan,
        short=short,
    )


def _scored(rule: Rule, stream: TrialStream, manifest: Manifest) -> Outcome:
    try:
        return rule(stream, manifest)
    except StreamError as exc:
        return Outcome(SHORT, stream.pairs, 0, str(exc))


def evaluate(
    streams: Sequence[TrialStream], manifest: Manifest, rules: Mapping[str, Rule]
) -> dict[str, dict[str, Cell]]:
    """rule name -> trial label -> cell, labels in the order they first appear."""
    kinds = {s.label: s.kind for s in streams}
    table: dict[str, dict[str, Cell]] = {}
    for name, rule in rules.items():
        outcomes: dict[str, list[Outcome]] = {label: [] for label in kinds}
        for stream in streams:
            outcomes[stream.label].append(_scored(rule, stream, manifest))
        table[name] = {label: tally(kinds[label], found) for label, found in outcomes.items()}
    return table


def markdown(table: Mapping[str, Mapping[str, Cell]], relative_to: str) -> list[str]:
    """The table as Markdown lines; `pairs %` is the rule's mean pairs over `relative_to`'s."""
    head = [
        "rule",
        "trials",
        "n",
        "accepted",
        "rejected",
        "inconclusive",
        "false acc",
        "false rej",
        "pairs/workload mean",
        "median",
        f"pairs % of {relative_to.split()[0]}",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for name, cells in table.items():
        for label, cell in cells.items():
            if not cell.trials:
                continue
            anchor = table[relative_to][label].mean_pairs
            share = 100.0 * cell.mean_pairs / anchor if anchor else math.nan
            row = [
                name,
                label,
                str(cell.trials),
                str(cell.accepted),
                str(cell.rejected),
                str(cell.inconclusive),
                str(cell.false_accepts),
                str(cell.false_rejects),
                f"{cell.mean_pairs:.1f}",
                f"{cell.median_pairs:g}",
                f"{share:.0f} %",
            ]
            lines.append("| " + " | ".join(row) + " |")
    lines += [
        f"{name}, {label}: {cell.short} trial(s) left out, their record ends before it decides"
        for name, cells in table.items()
        for label, cell in cells.items()
        if cell.short
    ]
    return lines


def realized_wins(streams: Sequence[TrialStream]) -> dict[str, float]:
    """Trial label -> the change the trials actually measured, in % of the baseline's wall: the
    median over trials of each trial's median per-pair ratio. An injected win is sized once,
    before the trials, so the size it has on the machine of the trials is printed beside it."""
    found: dict[str, list[float]] = {}
    for stream in streams:
        for w in stream.workloads:
            ratios = [c / b for b, c in zip(w.baseline["wall"], w.candidate["wall"], strict=True)]
            found.setdefault(stream.label, []).append(statistics.median(ratios))
    return {label: (statistics.median(r) - 1.0) * 100.0 for label, r in found.items()}


def predicted_acceptance(
    streams: Sequence[TrialStream], schedule: Schedule
) -> tuple[float, dict[str, tuple[float, float]]]:
    """(median winsorized sd of the A/A streams' wall log ratios, trial label -> (the change
    the trials measured in %, the acceptance `stats.power` predicts for it at that noise)).

    The check behind `speedproof calibrate`'s noise table: the prediction beside the rules
    table's measured acceptance. One workload's noise: the streams' first workload."""
    noise = []
    for stream in streams:
        if stream.kind == "a/a":
            w = stream.workloads[0]
            reading = paired_compare(
                w.baseline["wall"],
                w.candidate["wall"],
                workload=w.workload,
                metric="wall",
                tier="representative",
                limit_pct=2.0,
            )
            sd = dict(reading.extra)["log_ratio_winsorized_sd"]
            if sd is not None:
                noise.append(sd)
    if not noise:
        return math.nan, {}
    sd = statistics.median(noise)
    workloads = len(streams[0].workloads)
    kinds = {s.label: s.kind for s in streams}
    predicted = {
        label: (change, acceptance_probability(-change, sd, schedule, workloads=workloads))
        for label, change in realized_wins(streams).items()
        if kinds[label] != "a/a" and 0.0 < -change < 100.0
    }
    return sd, predicted


# ----- the JSON-lines record ------------------------------------------------------------------


def stream_from_json(data: Mapping[str, Any]) -> TrialStream:
    """A trial line of the record (see `measurement_rules.py`) as a stream."""
    try:
        workloads = tuple(
            RecordedWorkload(
                workload,
                {m: [float(v) for v in entry["baseline"][m]] for m in TIMED_METRICS},
                {m: [float(v) for v in entry["candidate"][m]] for m in TIMED_METRICS},
            )
            for workload, entry in data["workloads"].items()
        )
        return TrialStream(
            trial=str(data["trial"]),
            kind=str(data["kind"]),
            win_pct=float(data["win_pct"]),
            workloads=workloads,
            contended=any(bool(e["contended"]) for e in data["workloads"].values()),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StreamError(f"a trial line of the record is malformed: {exc!r}") from exc
