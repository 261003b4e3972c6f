"""Every statistic speedproof computes, in one package, scipy underneath.

- `unpaired`: baseline and candidate as two independent samples, Welch's t and Mann-Whitney U
  (ADR 0002); `welch_compare`, Welch's t alone at a given alpha, decides samples that are not
  pairs (the reported lane).
- `paired`: the timed lane's ABBA pairs as pairs, per-pair log ratios, a 10 %-trimmed paired t
  and a Wilcoxon signed-rank test that must both agree (ADR 0020, 0026).
- `sequential`: the alpha-spending schedule that lets the judge measure in rounds and stop
  early without the false positives of repeated fixed-horizon tests (ADR 0020). The loop that
  applies it is `speedproof.judge.measure.sequential_rule`; nothing here decides a verdict, so this
  package imports neither `policy` nor anything above it.
- `power`: the win a schedule's last look resolves at a measured noise per pair, and the pairs
  a given win needs; calibrate's estimate (ADR 0029).
"""

from speedproof.stats.paired import paired_compare
from speedproof.stats.sequential import DEFAULT_RHO, Schedule
from speedproof.stats.unpaired import (
    ALPHA,
    CONFIDENCE,
    MIN_SAMPLES,
    T_CUTOFF,
    compare,
    holm,
    welch_compare,
)

__all__ = [
    "ALPHA",
    "CONFIDENCE",
    "DEFAULT_RHO",
    "MIN_SAMPLES",
    "T_CUTOFF",
    "Schedule",
    "compare",
    "holm",
    "paired_compare",
    "welch_compare",
]
