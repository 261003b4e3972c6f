"""Reading the metrics a benchmark prints: the reported lane.

A target of the reported lane is any command that prints, as the last non-empty line of its
stdout, one JSON object of named numbers, for example `{"latency_s": 41.2, "success": 0.78}`.
The manifest's `[reported]` block names the primary metric and the protected ones; every one of
them must be in every run's object, as a finite number. Anything else (no JSON, a missing name,
a string, NaN) is a `MetricsError` that names the problem: a run that does not report is a
failed run, never a zero.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from speedproof.errors import SpeedproofError

# The object must be on one of the last few lines: a benchmark may print a trailing banner,
# but scanning all of a large output for JSON would find stray objects in its logs.
_LAST_LINES = 5


class MetricsError(SpeedproofError):
    """A run's stdout does not carry the metrics the manifest names."""


def _last_object(stdout: bytes) -> dict[str, object]:
    lines = [line for line in stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in reversed(lines[-_LAST_LINES:]):
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            found = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MetricsError(
                f"the metrics line is not valid JSON ({exc.msg}): {text[:120]}"
            ) from exc
        if isinstance(found, dict):
            return found
    raise MetricsError(
        f"no JSON object of metrics on the last {_LAST_LINES} non-empty lines of stdout"
    )


def parse_metrics(stdout: bytes, names: Sequence[str]) -> dict[str, float]:
    """The named metrics from a run's stdout, in the order of `names`."""
    found = _last_object(stdout)
    values: dict[str, float] = {}
    for name in names:
        if name not in found:
            raise MetricsError(f"the metrics object has no {name!r} (it has {sorted(found)})")
        value = found[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MetricsError(f"metric {name!r} is {value!r}, not a number")
        if not math.isfinite(value):
            raise MetricsError(f"metric {name!r} is {value!r}, not a finite number")
        values[name] = float(value)
    return values
