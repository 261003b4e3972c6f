"""The advisor: calibrated yes/no cause questions that rank what to optimize (docs/adr/0024).

A model (any OpenAI-compatible endpoint that returns token log-probabilities, pinned to an
exact model id) or, offline, deterministic static detectors answer seven cause questions about
each hot function and eight hazard questions about each candidate diff. Every answer is judged
against that build's usual answer over a shipped reference set; code vetoes flags it knows to
be wrong. Flags order the coordinator's targets and hazards become concerns: advice that never
reaches the verdict.

Entry points: `open_advisor(manifest.advisor, ...)` -> `Advisor` with `.analyst()` and
`.reviewer()`; `rank(hot, flags)`; `records` for the ledger; `speedproof advisor baseline|drift`.
"""

from speedproof.advisor.analyst import AdvisorAnalyst, AdvisorReviewer
from speedproof.advisor.answers import Answer, Answerer
from speedproof.advisor.baseline import Baseline, load_baseline, measure_baseline, shipped_baseline
from speedproof.advisor.client import EndpointAdvisor
from speedproof.advisor.errors import (
    AdvisorConfigError,
    AdvisorError,
    BaselineMismatch,
    LogprobsRefused,
    NoYesNoAnswer,
    PinnedBuildMismatch,
    ReferenceSetError,
)
from speedproof.advisor.factory import Advisor, open_advisor
from speedproof.advisor.flags import AdvisorFlags, CauseFlag, FunctionFlags, Hazard, HazardReview
from speedproof.advisor.gates import Gate, Gates
from speedproof.advisor.rank import rank, score
from speedproof.advisor.static import STATIC_MODEL, StaticAdvisor

__all__ = [
    "STATIC_MODEL",
    "Advisor",
    "AdvisorAnalyst",
    "AdvisorConfigError",
    "AdvisorError",
    "AdvisorFlags",
    "AdvisorReviewer",
    "Answer",
    "Answerer",
    "Baseline",
    "BaselineMismatch",
    "CauseFlag",
    "EndpointAdvisor",
    "FunctionFlags",
    "Gate",
    "Gates",
    "Hazard",
    "HazardReview",
    "LogprobsRefused",
    "NoYesNoAnswer",
    "PinnedBuildMismatch",
    "ReferenceSetError",
    "StaticAdvisor",
    "load_baseline",
    "measure_baseline",
    "open_advisor",
    "rank",
    "score",
    "shipped_baseline",
]
