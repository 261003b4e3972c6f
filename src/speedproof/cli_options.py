"""Command-line options that several commands share, defined once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HoldoutDirOption = Annotated[
    Path | None,
    typer.Option(
        "--holdout-dir",
        help="Folder of holdout inputs named by {holdout} (over the manifest's [holdout] dir).",
    ),
]
