"""Named errors of the corpus and training loop (all are `SpeedproofError`s)."""

from __future__ import annotations

from speedproof.ground.errors import SpeedproofError


class CorpusError(SpeedproofError):
    """A corpus file is malformed or inconsistent; the message names the file and the line."""


class PairRejected(CorpusError):
    """A generated slow/fast pair did not pass the verifier, so it cannot become a row."""


class LeakageError(CorpusError):
    """The leakage audit found a leak; the message lists every one."""


class SplitBoundaryError(CorpusError):
    """A row of a dev or frozen case was offered for training."""


class TrainExtraMissing(SpeedproofError):
    """`fn train` needs the optional `[train]` extra (torch, transformers, peft, trl, datasets)."""
