"""The two gates every answer must clear before it becomes a flag.

A probability alone says little: a model may answer "yes" to "does this allocate?" for most
functions. So each answer is compared with the model's usual answer to the same question over
the reference set: z = (p - mean) / sd. A cause is flagged only when z >= `cause_sd` (0.5) and
p >= `cause_p` (0.5); a hazard only when z >= `hazard_sd` (2.0) and p >= `hazard_p` (0.5). The
thresholds live in the manifest's `[advisor]` block.

A question whose reference answers never vary has sd 0; its sd is floored at 0.01 (one point of
probability) so any answer above the usual one counts as far above it rather than dividing by
zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from speedproof.advisor.questions import Kind
from speedproof.manifest import Advisor

SD_FLOOR = 0.01
Outcome = Literal["flagged", "below-sd", "below-p", "below-both"]


@dataclass(frozen=True)
class Gate:
    sd: float
    p: float


@dataclass(frozen=True)
class Gates:
    cause: Gate = Gate(sd=0.5, p=0.5)
    hazard: Gate = Gate(sd=2.0, p=0.5)

    @classmethod
    def from_settings(cls, settings: Advisor) -> Gates:
        return cls(
            cause=Gate(settings.cause_sd, settings.cause_p),
            hazard=Gate(settings.hazard_sd, settings.hazard_p),
        )

    def of(self, kind: Kind) -> Gate:
        return self.cause if kind == "cause" else self.hazard

    def to_record(self) -> dict[str, float]:
        return {
            "cause_sd": self.cause.sd,
            "cause_p": self.cause.p,
            "hazard_sd": self.hazard.sd,
            "hazard_p": self.hazard.p,
        }


@dataclass(frozen=True)
class Usual:
    """A question's answers over the reference set."""

    mean: float
    sd: float
    n: int


@dataclass(frozen=True)
class Judged:
    probability: float
    z: float
    outcome: Outcome

    @property
    def passed(self) -> bool:
        return self.outcome == "flagged"


def z_score(probability: float, usual: Usual) -> float:
    return (probability - usual.mean) / max(usual.sd, SD_FLOOR)


def judge(probability: float, usual: Usual, gate: Gate) -> Judged:
    z = z_score(probability, usual)
    high = z >= gate.sd
    likely = probability >= gate.p
    outcome: Outcome
    if high and likely:
        outcome = "flagged"
    elif likely:
        outcome = "below-sd"
    elif high:
        outcome = "below-p"
    else:
        outcome = "below-both"
    return Judged(probability, round(z, 4), outcome)
