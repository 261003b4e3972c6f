"""How a figure is written in every version of the report, so HTML, Markdown and plots agree."""

from __future__ import annotations

from speedproof.report.model import Reading

# Ledger unit → shown unit: wall and cpu are kept in seconds, memory in KiB, binary size in bytes.
_UNITS: dict[str, tuple[float, str]] = {
    "wall": (1000.0, "ms"),
    "cpu": (1000.0, "ms"),
    "memory": (1 / 1024, "MiB"),
    "binary_size": (1 / 1024, "KiB"),
    "instructions": (1.0, "Ir"),
}


def amount(metric: str, value: float | None) -> str:
    """A mean in the unit a person reads: `12.3 ms`, `41.2 MiB`, `1,234,567 Ir`."""
    if value is None:
        return "n/a"
    scale, unit = _UNITS.get(metric, (1.0, ""))
    shown = value * scale
    text = f"{shown:,.0f}" if metric == "instructions" else f"{shown:.4g}"
    return f"{text} {unit}".strip()


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}%"


def interval(r: Reading) -> str:
    if r.ci_low_pct is None or r.ci_high_pct is None:
        return "n/a"
    return f"[{r.ci_low_pct:+.2f}%, {r.ci_high_pct:+.2f}%]"


def p_value(r: Reading) -> str:
    if r.exact:
        return "exact"
    return "n/a" if r.p_value is None else f"{r.p_value:.3g}"


def figure(r: Reading) -> str:
    """One reading in one line: `-12.30% [-15.10%, -9.40%] p=0.001 n=6`."""
    if r.exact:
        return f"{pct(r.delta_pct)} (exact, n={min(r.n_baseline, r.n_candidate)})"
    n = min(r.n_baseline, r.n_candidate)
    return f"{pct(r.delta_pct)} {interval(r)} p={p_value(r)} n={n}"


def seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value < 60:
        return f"{value:.1f} s"
    minutes, rest = divmod(value, 60)
    return f"{minutes:.0f} min {rest:.0f} s"


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def when(stamp: str | None) -> str:
    """An ISO timestamp to `2024-05-01 12:03:04` (UTC as written)."""
    return "" if stamp is None else stamp[:19].replace("T", " ")


def plain(value: object) -> str:
    """A recorded value in words, not JSON: `key value; key value` for a mapping (a nested one
    in parentheses), items joined by commas, yes/no for booleans, none for a missing value."""
    if isinstance(value, dict):
        return _plain_mapping(value)
    if isinstance(value, list | tuple):
        return ", ".join(plain(item) for item in value) if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _plain_mapping(value: dict[object, object]) -> str:
    parts = [
        f"{key} ({plain(item)})" if isinstance(item, dict) and item else f"{key} {plain(item)}"
        for key, item in value.items()
    ]
    return "; ".join(parts) if parts else "nothing"
