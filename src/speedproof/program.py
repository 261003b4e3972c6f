"""A built target ready to run, and one workload's invocation of it.

Toolchains produce a `Program` (baseline or candidate); the behaviour gate and the timed lane
consume `Invocation`s, so neither needs to know which language the target is written in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from speedproof.manifest import Workload
from speedproof.sandbox import SandboxSpec

Side = Literal["baseline", "candidate"]


@dataclass(frozen=True)
class Program:
    side: Side
    # The target folder inside this side's worktree: workloads run here, inputs resolve here.
    root: Path
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    # Folders the program may write while running (its worktree, a private scratch folder).
    writable: tuple[Path, ...] = ()
    network: bool = False
    binary_size: int | None = None

    def spec(self) -> SandboxSpec:
        return SandboxSpec(writable=self.writable, env=self.env, network=self.network)


@dataclass(frozen=True)
class Invocation:
    program: Program
    workload: Workload
    prefix: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return (*self.program.argv, *self.prefix, *self.workload.args)

    @property
    def stdin(self) -> Path | None:
        if self.workload.stdin is None:
            return None
        return self.program.root / self.workload.stdin
