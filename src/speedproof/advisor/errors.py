"""Named advisor failures. Each one stops the advisor from answering; none is turned into a
default answer, because a made-up probability would steer a campaign as if it were measured."""

from __future__ import annotations

from speedproof.ground.errors import SpeedproofError


class AdvisorError(SpeedproofError):
    """The advisor cannot give an answer that means what it claims to mean."""


class AdvisorConfigError(AdvisorError):
    """The advisor is configured with something it cannot use (a provider without token
    probabilities, a malformed model id, a language it has no detectors for)."""


class LogprobsRefused(AdvisorError):
    """The endpoint returned no token probabilities, so no calibrated answer exists."""


class NoYesNoAnswer(AdvisorError):
    """Neither "yes" nor "no" is among the first answer token's most likely alternatives."""


class PinnedBuildMismatch(AdvisorError):
    """An answer came from a model or provider other than the exact one asked for."""


class BaselineMismatch(AdvisorError):
    """A baseline was measured for another model, other questions or another reference set."""


class ReferenceSetError(AdvisorError):
    """The shipped reference set is missing, malformed, or not the one a baseline names."""
