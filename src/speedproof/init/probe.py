"""Asking one of the project's tools (its go, its python) something while init detects the project:
what it printed, as text, whatever its exit status (each question reads that itself), and in words
why there is no answer when the tool cannot start or does not finish in time."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_probe(
    argv: Sequence[str],
    *,
    timeout_s: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str] | str:
    """The finished process of `argv`, or why it could not run (a str)."""
    try:
        return subprocess.run(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
