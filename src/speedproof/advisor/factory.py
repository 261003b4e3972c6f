"""Opening the advisor a manifest's `[advisor]` block describes.

With no `model`, the offline static advisor answers, calibrated by the shipped baseline. With a
model (`openai:<exact id>` at `base_url`), the endpoint answers, pinned to that id, behind the
answer cache when a cache folder is given, calibrated by the baseline file given, which must
have been measured for that exact id (`speedproof advisor baseline`); there is no fallback to
the static advisor when the endpoint fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speedproof.advisor.analyst import AdvisorAnalyst, AdvisorReviewer, ReadFile
from speedproof.advisor.answers import Answerer
from speedproof.advisor.baseline import Baseline, load_baseline, shipped_baseline
from speedproof.advisor.cache import AnswerCache, CachedAnswerer
from speedproof.advisor.client import EndpointAdvisor, Observer
from speedproof.advisor.errors import AdvisorConfigError
from speedproof.advisor.gates import Gates
from speedproof.advisor.static import StaticAdvisor
from speedproof.manifest import Advisor as AdvisorSettings


@dataclass(frozen=True)
class Advisor:
    answerer: Answerer
    baseline: Baseline
    gates: Gates
    max_functions: int

    def analyst(self, read_file: ReadFile | None = None) -> AdvisorAnalyst:
        return AdvisorAnalyst(
            self.answerer,
            self.baseline,
            gates=self.gates,
            max_functions=self.max_functions,
            read_file=read_file,
        )

    def reviewer(self, read_file: ReadFile | None = None) -> AdvisorReviewer:
        return AdvisorReviewer(self.answerer, self.baseline, gates=self.gates, read_file=read_file)


def endpoint_answerer(
    settings: AdvisorSettings, *, cache_dir: Path | None = None, observe: Observer | None = None
) -> Answerer:
    if settings.model is None:
        return StaticAdvisor()
    endpoint = EndpointAdvisor(settings.model, base_url=settings.base_url, observe=observe)
    if cache_dir is None:
        return endpoint
    return CachedAnswerer(endpoint, AnswerCache.in_folder(cache_dir))


def open_advisor(
    settings: AdvisorSettings,
    *,
    baseline: Path | None = None,
    cache_dir: Path | None = None,
    observe: Observer | None = None,
) -> Advisor:
    """The advisor `settings` names, checked against its baseline before any question."""
    answerer = endpoint_answerer(settings, cache_dir=cache_dir, observe=observe)
    if baseline is not None:
        measured = load_baseline(baseline)
    elif settings.model is None:
        measured = shipped_baseline()
    else:
        raise AdvisorConfigError(
            f"advisor model {settings.model} has no baseline: measure one with `speedproof "
            f"advisor baseline --model {settings.model} --out FILE` and give that file"
        )
    found = Advisor(answerer, measured, Gates.from_settings(settings), settings.max_functions)
    found.analyst()  # checks the baseline against the build, the questions and the reference
    return found
