"""Named errors. Every failure speedproof reports is one of these, never a bare exception."""

from __future__ import annotations


class SpeedproofError(Exception):
    """Base of every error speedproof raises on purpose."""


class ManifestError(SpeedproofError):
    """The manifest is malformed; the message names the key and the line."""


class InfrastructureError(SpeedproofError):
    """Something outside the candidate failed: a tool is missing, a baseline does not build."""


class SandboxUnavailable(InfrastructureError):
    """bubblewrap cannot run here; judging stops unless the user opts out explicitly."""


class PatchError(SpeedproofError):
    """A patch is malformed or cannot be applied; the candidate is rejected by name."""
