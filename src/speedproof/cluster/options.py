"""The `--cluster` and `--workers` options every function-mode command that verifies shares."""

from __future__ import annotations

from typing import Annotated

import typer

ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="Where verifications run: local worker processes (the default), `ray` (the Ray "
        "cluster at RAY_ADDRESS or started here with `ray start --head`) or ray://HOST:PORT.",
    ),
]
WorkersOption = Annotated[
    int, typer.Option("--workers", min=1, help="Local worker processes (without --cluster).")
]
