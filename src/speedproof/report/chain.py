"""The accepted chain of a campaign: which candidate became whose parent, and what it added up to.

An accepted candidate becomes the parent revision of the next one, so each accepted candidate's
comparison is against the previous link, and the chain's change on a workload is the product of
the links' mean ratios: two links of -10 % each make -19 %, not -20 %.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from speedproof.report.model import (
    Candidate,
    Chain,
    ChainStep,
    Cumulative,
    Event,
    Reading,
    RoleCall,
    RoleCost,
)


def chain_ids(
    campaign: str | None, events: Sequence[Event], verdicts: dict[int, str | None]
) -> list[int]:
    """The ids of the candidates that became parents, in order.

    A campaign's loop writes an "accepted" event when an accept stands (after the holdout), so
    where the campaign has an event log those events are the chain. A ledger without one (a
    campaign recorded only through its candidates) falls back to the accepted verdicts; the
    candidates judged outside any campaign were each measured against their own base, so they
    form no chain.
    """
    if campaign is None:
        return []
    if events:
        ids = [e.candidate_id for e in events if e.kind == "accepted" and e.candidate_id]
        return list(dict.fromkeys(ids))
    return sorted(i for i, v in verdicts.items() if v == "accepted")


def parent_of(candidate_id: int, chain: Sequence[int]) -> int | None:
    """The last link accepted before this candidate; None means the campaign's base revision."""
    earlier = [link for link in chain if link < candidate_id]
    return earlier[-1] if earlier else None


def rests_on_reading(candidate: Candidate) -> Reading | None:
    """The reading an accept rests on: its workload and lane, the metric its reason names."""
    matching = [
        r
        for r in candidate.readings
        if r.workload == candidate.rests_on and (candidate.lane is None or r.lane == candidate.lane)
    ]
    if not matching:
        return None
    first_word = candidate.reasons[0].split(" ", 1)[0] if candidate.reasons else ""
    named = [r for r in matching if r.metric == first_word]
    return named[0] if named else max(matching, key=_improvement_or_worst)


def _improvement_or_worst(r: Reading) -> float:
    return -math.inf if r.improvement_pct is None else r.improvement_pct


def build_chain(candidates: Sequence[Candidate], ids: Sequence[int]) -> Chain:
    by_id = {c.id: c for c in candidates}
    links = [by_id[i] for i in ids if i in by_id]
    steps = []
    for link in links:
        reading = rests_on_reading(link)
        steps.append(
            ChainStep(
                candidate_id=link.id,
                metric=reading.metric if reading else None,
                workload=reading.workload if reading else None,
                improvement_pct=reading.improvement_pct if reading else None,
            )
        )
    metrics = Counter(s.metric for s in steps if s.metric)
    metric = metrics.most_common(1)[0][0] if metrics else "wall"
    return Chain(steps=steps, cumulative=_cumulative(links, metric))


def _cumulative(links: Sequence[Candidate], metric: str) -> list[Cumulative]:
    ratios: dict[str, list[float]] = defaultdict(list)
    first: dict[str, Reading] = {}
    for link in links:
        for r in link.readings:
            if r.metric != metric or not r.baseline_mean or r.candidate_mean is None:
                continue
            ratios[r.workload].append(r.candidate_mean / r.baseline_mean)
            first.setdefault(r.workload, r)
    found = []
    for workload in sorted(ratios):
        product = math.prod(ratios[workload])
        lower = first[workload].lower_is_better
        found.append(
            Cumulative(
                workload=workload,
                metric=metric,
                steps=len(ratios[workload]),
                of_steps=len(links),
                first_baseline_mean=first[workload].baseline_mean or 0.0,
                improvement_pct=(1 - product) * 100 if lower else (product - 1) * 100,
            )
        )
    return found


def costs(calls: Iterable[RoleCall]) -> list[RoleCost]:
    """Tokens, money and time per role, in the order roles were first called, then the total."""
    by_role: dict[str, list[RoleCall]] = defaultdict(list)
    everything: list[RoleCall] = []
    for call in calls:
        by_role[call.role].append(call)
        everything.append(call)
    rows = [_cost(role, group) for role, group in by_role.items()]
    return [*rows, _cost("total", everything)] if rows else []


def _cost(role: str, calls: Sequence[RoleCall]) -> RoleCost:
    return RoleCost(
        role=role,
        calls=len(calls),
        failed=sum(1 for c in calls if not c.ok),
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        cost_usd=sum(c.cost_usd for c in calls if c.cost_usd is not None),
        unpriced=sum(1 for c in calls if c.cost_usd is None),
        duration_s=sum(c.duration_s for c in calls),
    )
