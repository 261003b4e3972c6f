"""Named errors of the execution layer (all are `SpeedproofError`s)."""

from __future__ import annotations

from speedproof.ground.errors import InfrastructureError, SpeedproofError


class ClusterError(SpeedproofError):
    """A cluster was asked for something it cannot do: an unknown spec, a node it does not have."""


class ClusterUnavailable(InfrastructureError):
    """The cluster cannot be used at all: Ray is not installed, or no cluster answers."""
