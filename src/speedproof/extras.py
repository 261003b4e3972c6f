"""Optional dependency groups (pip "extras"): import a library one of them brings, or say in one
line which extra to install.

`pip install speedproof` brings what judging needs: `judge`, `verify`, `calibrate`, `manifest
validate`, `init`, `report` (without plots) and `optimize` with the offline heuristic proposer.
The rest is opt-in, and each library of an extra is imported only by the feature that uses it,
through `require`, so a missing one costs nothing until that feature is asked for:

- `llm`: openai, anthropic, httpx2: the hosted model providers (`--model openai:...`,
  `--model anthropic:...`) and the advisor's model endpoint.
- `report`: plotly: the HTML report's plots.
- `fn`: pyseccomp: function mode's seccomp sandbox.

`EXTRA_OF` is the one table of which extra brings which module; tests/cli/test_extras.py holds
pyproject.toml's `[project.optional-dependencies]` to it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from speedproof.ground.errors import InfrastructureError

# Top-level module -> the extra that installs it.
EXTRA_OF: dict[str, str] = {
    "openai": "llm",
    "anthropic": "llm",
    "httpx2": "llm",
    "plotly": "report",
    "pyseccomp": "fn",
}


class MissingExtra(InfrastructureError):
    """A feature needs a library of an extra that is not installed; the message is one line
    naming the feature, the extra and the pip command."""

    def __init__(self, feature: str, extra: str, *, missing: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        self.missing = missing
        message = f"{feature} needs the {extra} extra: {install_hint(extra)}"
        super().__init__(message if missing is None else f"{message} ({missing} is missing)")


def install_hint(extra: str) -> str:
    """The pip command that installs `extra`."""
    return f"pip install 'speedproof[{extra}]'"


def require(module: str, feature: str) -> ModuleType:
    """`module` imported, or `MissingExtra` naming `feature` and the extra that brings it.

    `feature` is what the user asked for, as they would recognise it ("the model provider
    openai:gpt-4o", "drawing the HTML report's plots"). Only a module that is not there at all
    becomes `MissingExtra`; a library that is installed but fails to load (a missing shared
    library, say) raises its own error, which the caller knows how to word.
    """
    extra = EXTRA_OF[module.partition(".")[0]]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # The module itself, or one of the libraries it needs (a half-installed extra): either
        # way, installing the extra again is the fix. Name what is missing when it is not the
        # module asked for, so a broken install is not mistaken for an absent one.
        own = exc.name is None or exc.name.partition(".")[0] == module.partition(".")[0]
        raise MissingExtra(feature, extra, missing=None if own else exc.name) from exc
