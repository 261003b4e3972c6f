"""A built target ready to run.

Toolchains produce a `Program` (baseline or candidate); one workload's run of it is an
`Invocation` (`speedproof.ground.invocation`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from speedproof.ground.sandbox import SandboxSpec

Side = Literal["baseline", "candidate"]


@dataclass(frozen=True)
class Program:
    side: Side
    # The target folder inside this side's worktree: workloads run here, inputs resolve here.
    root: Path
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    # Folders the program may write while running. Empty for a built target: a run that could
    # write its tree could leave answers for the next run to read.
    writable: tuple[Path, ...] = ()
    network: bool = False
    binary_size: int | None = None
    # Folders it sees read-only: the toolchain, its worktree and its build folder.
    readable: tuple[Path, ...] = ()
    # Declared output files (relative to `root`) and, in the sandbox, the host folder where each
    # run's copies of them land: one file per declared path, bound writable over an empty
    # placeholder in the read-only tree and emptied before every run. None (unsandboxed runs)
    # writes them in the tree, where the tree's snapshot allows them and nothing else.
    output_files: tuple[str, ...] = ()
    outputs: Path | None = None
    # What runs a benchmark workload (`speedproof.bench`), built by speedproof's build step: a
    # Go test binary by the package as the manifest names it; empty when no workload needs one.
    benches: Mapping[str, Path] = field(default_factory=dict)
    # Built files run by a measured run (a Go binary, its benchmark binaries), copied anew before
    # each one (`speedproof.judge.measure.placement`): a file kept for a whole judgement keeps the
    # memory it was placed in, and that alone moved identical Go binaries by up to 5 %.
    fresh_per_run: tuple[Path, ...] = ()

    def spec(self) -> SandboxSpec:
        return SandboxSpec(
            writable=self.writable,
            env=self.env,
            network=self.network,
            readable=self.readable,
            files=tuple((output_path(self, r), self.root / r) for r in self.output_files)
            if self.outputs is not None
            else (),
        )


def relocated(program: Program, old: Path, new: Path) -> Program:
    """The same program run from a copy of its worktree (`old` → `new`), which it may write.

    Paths into the worktree (its folder, a script, PYTHONPATH) are rewritten; the build folder
    and the toolchain stay where they are. Output files are written in the copy itself.
    """

    def moved(text: str) -> str:
        return text.replace(str(old), str(new))

    def moved_path(path: Path) -> Path:
        return new / path.relative_to(old) if path.is_relative_to(old) else path

    return replace(
        program,
        root=moved_path(program.root),
        argv=tuple(moved(a) for a in program.argv),
        env={name: moved(value) for name, value in program.env.items()},
        readable=tuple(p for p in program.readable if not p.is_relative_to(old)),
        writable=(*program.writable, new),
        outputs=None,
        benches={name: moved_path(path) for name, path in program.benches.items()},
    )


def output_path(program: Program, relative: str) -> Path:
    """Where a run's declared output file is read from: its per-run copy, else the tree."""
    if program.outputs is None:
        return program.root / relative
    return program.outputs / hashlib.sha256(relative.encode()).hexdigest()[:16]
