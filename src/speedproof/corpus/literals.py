"""Literal bands: every drawn literal comes from a range that no other split draws from.

A family declares each literal slot with a base range `[lo, hi]`. The range is cut into four
contiguous bands in the order train, dev, frozen_seen, frozen_heldout, sized 40/20/20/20 % of the
range, so a dev or frozen case never repeats a constant a training case used (a model cannot
memorise "m = 421 means modulo" from training and meet 421 again in evaluation). ADR 0016.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

SplitName = Literal["train", "dev", "frozen_seen", "frozen_heldout"]
SPLITS: tuple[SplitName, ...] = ("train", "dev", "frozen_seen", "frozen_heldout")
SEEN_SPLITS: tuple[SplitName, ...] = ("train", "dev", "frozen_seen")

# Cumulative fractions of the base range at which each split's band ends.
_CUTS: dict[SplitName, tuple[float, float]] = {
    "train": (0.0, 0.4),
    "dev": (0.4, 0.6),
    "frozen_seen": (0.6, 0.8),
    "frozen_heldout": (0.8, 1.0),
}


def band(lo: int, hi: int, split: SplitName) -> tuple[int, int]:
    """The inclusive sub-range of `[lo, hi]` that `split` draws from."""
    width = hi - lo + 1
    if width < 5:
        raise ValueError(f"literal range [{lo}, {hi}] is too narrow to cut into four bands")
    start, end = _CUTS[split]
    band_lo = lo + int(width * start)
    band_hi = lo + int(width * end) - 1
    return band_lo, band_hi


def draw(rng: random.Random, lo: int, hi: int, split: SplitName) -> int:
    """One literal from `split`'s band of `[lo, hi]`."""
    band_lo, band_hi = band(lo, hi, split)
    return rng.randint(band_lo, band_hi)


# The corpus the `fn` commands use when none is named: the newest frozen one in the repository
# (v1 and v2 are kept readable and marked superseded).
DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "corpus" / "v3"
