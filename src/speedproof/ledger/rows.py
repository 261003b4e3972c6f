"""What the ledger's writers hand it: the row types, the JSON every body is stored as, and the
six writes a judgement makes (`CandidateWriter`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def dumps(value: Any) -> str:
    return json.dumps(plain(value), sort_keys=True)


@dataclass(frozen=True)
class SampleRow:
    series: int
    workload: str
    side: str
    pair_index: int
    position: int
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    exit_code: int
    stdout_sha256: str
    env_pad: int = 0
    # Reported metrics of this run as (name, value) pairs; empty outside the reported lane.
    reported: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class RoleCall:
    """One model turn of a campaign role, with what it cost; `answer` is the raw text."""

    campaign: str | None
    candidate_id: int | None
    role: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_s: float
    ok: bool
    rejection: str | None
    prompt_sha256: str
    answer: str


@dataclass(frozen=True)
class HotFunctionRow:
    """One hot function as discovery ranked it (rank 1 is the hottest)."""

    rank: int
    name: str
    file: str
    start_line: int
    end_line: int
    self_pct: float
    cum_pct: float
    samples: int


@dataclass(frozen=True)
class ProposerOutcome:
    """Why the proposer did (`proposed`) or did not propose a change to `function`: one rule's
    outcome (`rule` set), or a role's own answer (`rule` None; `function` empty when the answer
    covers every hot function, like the coordinator's "nothing left")."""

    function: str
    role: str
    rule: str | None
    proposed: bool
    reason: str


class CandidateWriter(Protocol):
    """The six writes a judgement makes, in the order it makes them: the `Ledger` itself, or a
    stand-in that records them on a node for the driver to replay (`cluster.recording`)."""

    def start_candidate(
        self,
        *,
        origin: str,
        target: str,
        repo: Path,
        base_rev: str,
        patch_sha256: str,
        diff: str,
        sandbox: str,
        facts: dict[str, Any],
        campaign: str | None = None,
    ) -> int: ...

    def add_gate(
        self, candidate_id: int, name: str, passed: bool, duration_s: float, detail: Any
    ) -> None: ...

    def add_commands(
        self,
        candidate_id: int,
        stage: str,
        commands: Sequence[tuple[Sequence[str], int | None, float | None]],
    ) -> None: ...

    def add_samples(self, candidate_id: int, rows: Sequence[SampleRow]) -> None: ...

    def add_comparisons(self, candidate_id: int, comparisons: Sequence[Any]) -> None: ...

    def finish(
        self,
        candidate_id: int,
        *,
        verdict: str | None,
        reasons: Sequence[str],
        rests_on: str | None,
        lane: str | None,
        timings: dict[str, float],
        error: str | None = None,
    ) -> None: ...
