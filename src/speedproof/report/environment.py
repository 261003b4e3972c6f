"""The jinja2 environments of the report: one escaping HTML, one writing Markdown.

Both load the `*.j2` templates shipped inside this package, fail on an undefined name instead of
printing an empty string, and share the figure formatters of `format.py` as filters.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from speedproof.report import format as fmt
from speedproof.report.chain import rests_on_reading

_FILTERS: dict[str, Any] = {
    "amount": fmt.amount,
    "pct": fmt.pct,
    "interval": fmt.interval,
    "p_value": fmt.p_value,
    "figure": fmt.figure,
    "seconds": fmt.seconds,
    "usd": fmt.usd,
    "when": fmt.when,
    "plain": fmt.plain,
    "compact_json": lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False),
    "rests_on_reading": rests_on_reading,
}


def environment(*, html: bool) -> Environment:
    env = Environment(
        loader=PackageLoader("speedproof.report", "templates"),
        # The HTML report shows diffs, model answers and test output: every value is escaped
        # unless the code marks it safe (only plotly's own output and plotly.js are).
        autoescape=html,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(_FILTERS)
    return env
