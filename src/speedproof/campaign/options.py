"""What a campaign is asked to do: the target, the provider, the budgets and the exit thresholds.

Every figure here is recorded with the campaign when it starts, so a resumed campaign runs under
the budgets it was started with; a limit given again on `--resume` replaces the recorded one
(the change is recorded in the resume event), while what was already spent is always counted
from the ledger and never reset.

Defaults: 20 candidates and 4 hours bound every campaign, so one started with no limits at all
still ends; five candidates in a row without an accept end it as well (the default of
`--max-failures`). Tokens and cost are unbounded unless asked for: the default proposer, the
heuristic one, spends neither.

Seats: the analyst and the reviewer are each either a model role (`model`, the default) or the
advisor (`advisor`, docs/adr/0024): calibrated yes/no questions in place of the role's free
answer. The explorer is off unless asked for (`--explorer`): it costs one model call and a
second profile of the first parent, and a recording made without it has no explorer answer.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

from speedproof.ground.errors import SpeedproofError

DEFAULT_MODEL = "heuristic"
DEFAULT_MAX_CANDIDATES = 20
DEFAULT_MAX_DURATION_S = 4 * 3600.0
DEFAULT_MAX_FAILURES = 5

Seat = Literal["model", "advisor"]
SEATS: tuple[Seat, ...] = ("model", "advisor")

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(h|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


class OptionsError(SpeedproofError):
    """A campaign option is malformed or out of range."""


def parse_duration(text: str) -> float:
    """Seconds in `30m`, `90s`, `2h`, `1h30m` or a bare number of seconds."""
    cleaned = text.strip().lower()
    try:
        seconds = float(cleaned)
    except ValueError:
        parts = _DURATION.findall(cleaned)
        if not parts or _DURATION.sub("", cleaned).strip():
            raise OptionsError(
                f"duration {text!r} is not like 30m, 90s, 2h or 1h30m (or a number of seconds)"
            ) from None
        seconds = sum(float(amount) * _UNITS[unit] for amount, unit in parts)
    if seconds <= 0:
        raise OptionsError(f"duration {text!r} must be longer than zero")
    return seconds


@dataclass(frozen=True)
class Limits:
    """The budgets and thresholds that can end a campaign; None means no limit of that kind."""

    max_candidates: int = DEFAULT_MAX_CANDIDATES
    max_duration_s: float = DEFAULT_MAX_DURATION_S
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    target_pct: float | None = None
    max_failures: int = DEFAULT_MAX_FAILURES

    def __post_init__(self) -> None:
        if self.max_candidates < 1:
            raise OptionsError(f"--max-candidates must be at least 1, not {self.max_candidates}")
        if self.max_failures < 1:
            raise OptionsError(f"--max-failures must be at least 1, not {self.max_failures}")
        if self.max_duration_s <= 0:
            raise OptionsError("--max-duration must be longer than zero")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise OptionsError(f"--max-tokens must be at least 1, not {self.max_tokens}")
        if self.max_cost_usd is not None and self.max_cost_usd <= 0:
            raise OptionsError(f"--max-cost must be more than 0, not {self.max_cost_usd}")
        if self.target_pct is not None and not 0 < self.target_pct < 100:
            raise OptionsError(f"--target-pct must lie between 0 and 100, not {self.target_pct}")

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Limits:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in known})

    def overlay(self, given: dict[str, Any]) -> Limits:
        """These limits with the ones named in `given` (values not None) replaced."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise OptionsError(f"unknown limit(s): {', '.join(unknown)}")
        return replace(self, **{k: v for k, v in given.items() if v is not None})


@dataclass(frozen=True)
class CampaignOptions:
    """Everything `speedproof optimize` was asked, resolved to values."""

    manifest: Path
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    limits: Limits = Limits()
    out: Path | None = None
    allow_unsandboxed: bool = False
    # The A/A check before the first candidate (`stability`); off only when asked.
    stability_check: bool = True
    # Where a new campaign's records go is `out`; `resume` names a campaign folder to continue.
    resume: Path | None = None
    # Who answers the analyst's and the reviewer's turns: the model role or the advisor.
    analyst: Seat = "model"
    reviewer: Seat = "model"
    # Ask the explorer for extra profiling-only workloads (once a campaign).
    explorer: bool = False
    # Where candidates are judged: a cluster spec (`local`, `ray`, `ray://HOST:PORT`), or None
    # for here, one at a time.
    cluster: str | None = None

    def __post_init__(self) -> None:
        for name in ("analyst", "reviewer"):
            seat(getattr(self, name), name)

    def to_record(self) -> dict[str, Any]:
        """The options kept with the campaign (the manifest as an absolute path)."""
        return {
            "manifest": str(self.manifest.resolve()),
            "model": self.model,
            "base_url": self.base_url,
            "allow_unsandboxed": self.allow_unsandboxed,
            "stability_check": self.stability_check,
            "analyst": self.analyst,
            "reviewer": self.reviewer,
            "explorer": self.explorer,
            "cluster": self.cluster,
            **self.limits.to_record(),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any], *, resume: Path) -> CampaignOptions:
        try:
            manifest = Path(str(record["manifest"]))
            model = str(record["model"])
        except KeyError as exc:
            raise OptionsError(f"the campaign record lacks {exc.args[0]!r}") from exc
        return cls(
            manifest=manifest,
            model=model,
            base_url=record.get("base_url"),
            limits=Limits.from_record(record),
            stability_check=bool(record.get("stability_check", True)),
            resume=resume,
            analyst=seat(record.get("analyst", "model"), "analyst"),
            reviewer=seat(record.get("reviewer", "model"), "reviewer"),
            explorer=bool(record.get("explorer", False)),
            cluster=record.get("cluster"),
        )


def seat(value: object, name: str) -> Seat:
    """`value` as a seat of the `name` role; anything else is an OptionsError."""
    if value not in SEATS:
        raise OptionsError(f"--{name} is one of {', '.join(SEATS)}, not {value!r}")
    return value
