"""Do the two sides of calibrate's no-change trials differ in a way the test does not expect?

An a/a or null trial compares the base with code that does the same work, so each trial's
paired test statistic is, if the test is right about this machine, a draw from its null
distribution. Each trial's reading on a representative workload is turned into a normal score
(the signed quantile of its trimmed-t p-value). Over the trials of one kind, two checks:

- **lean**: Stouffer's sum of the scores over the root of their count. A second checkout that
  runs faster or slower than the base (a difference in the checkouts, their paths, their page
  cache) pushes every trial the same way; noise does not.
- **spread**: the sum of the squared scores against chi-squared with one degree of freedom per
  trial. Trials that scatter wider than their own standard errors say (noise that shifts from one
  trial to the next, a test too confident for this machine) inflate every error rate.

Either check below `WARN_P` is reported as a warning: the false accepts and false rejects in the
table above then understate what the judge's verdicts risk here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from speedproof.judge.measure.resolution import timed_primary_readings
from speedproof.judge.policy.evidence import Evidence

# A check warns below this p. Two kinds of no-change trial times each representative workload
# times two checks: with four such tests, 0.01 warns on a machine that is fine about 4 % of
# the time.
WARN_P = 0.01
# A p-value of 0 (every pair the same ratio) is scored as this one, |z| = 8.2, so a sum stays
# finite and one such trial cannot hide the rest.
SMALLEST_P = 1e-16


@dataclass(frozen=True)
class SideCheck:
    """One kind of no-change trial on one workload: how its trials' scores lean and scatter."""

    kind: str
    workload: str
    trials: int
    mean_z: float
    # Stouffer's z over the trials and its two-sided p.
    lean_z: float
    lean_p: float
    # The mean of the squared scores (1 when the test is right) and the chi-squared p of their
    # sum (upper tail: only a wider scatter than expected is a warning).
    spread: float
    spread_p: float


def trial_scores(evidence: Evidence, primary_metric: str) -> dict[str, float]:
    """Workload -> the normal score of the trial's representative primary reading."""
    from scipy import stats as sps

    scores = {}
    for c in timed_primary_readings(evidence, primary_metric):
        extra = dict(c.extra)
        t, p = extra.get("trimmed_t"), extra.get("p_trimmed_t")
        if t is None or p is None or math.isnan(t) or math.isnan(p):
            continue
        scores[c.workload] = math.copysign(float(sps.norm.isf(max(p, SMALLEST_P) / 2.0)), t)
    return scores


def check_sides(trials: Iterable[tuple[str, Mapping[str, float]]]) -> list[SideCheck]:
    """One check per (kind, workload), in first-seen order, from (kind, scores) per trial."""
    found: dict[tuple[str, str], list[float]] = {}
    for kind, scores in trials:
        for workload, z in scores.items():
            found.setdefault((kind, workload), []).append(z)
    return [_check(kind, workload, zs) for (kind, workload), zs in found.items()]


def _check(kind: str, workload: str, zs: list[float]) -> SideCheck:
    from scipy import stats as sps

    k = len(zs)
    lean = sum(zs) / math.sqrt(k)
    squares = sum(z * z for z in zs)
    return SideCheck(
        kind=kind,
        workload=workload,
        trials=k,
        mean_z=sum(zs) / k,
        lean_z=lean,
        lean_p=float(2.0 * sps.norm.sf(abs(lean))),
        spread=squares / k,
        spread_p=float(sps.chi2.sf(squares, k)),
    )
