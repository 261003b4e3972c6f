"""Discovery run for the tests: the real profiler under a sandbox that records what it was asked
to run, and the profiled functions by name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.discovery import Profile, discover
from speedproof.ground.sandbox import Sandbox, SandboxSpec
from speedproof.ground.toolchain import Tree
from speedproof.judge.build.factory import toolchain_for
from speedproof.manifest_loading import LoadedManifest
from support.toolchain import caches, sandbox


@dataclass
class RecordingSandbox:
    """The real sandbox, remembering every command it was asked to start."""

    inner: Sandbox
    commands: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: SandboxSpec) -> list[str]:
        self.commands.append(tuple(argv))
        return self.inner.wrap(argv, cwd=cwd, spec=spec)


def run_discovery(
    loaded: LoadedManifest, repo: Path, out: Path, **options: object
) -> tuple[Profile, list[tuple[str, ...]]]:
    recording = RecordingSandbox(sandbox())
    toolchain = toolchain_for(loaded.manifest, recording, caches=caches())
    tree = Tree("baseline", repo, repo, out)
    profile = discover(loaded, tree, sandbox=recording, toolchain=toolchain, **options)  # type: ignore[arg-type]
    return profile, recording.commands


def profiled(commands: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The profiled runs among the recorded commands (the cProfile runner is given with -c)."""
    return [c for c in commands if len(c) > 2 and c[1] == "-c" and "cProfile" in c[2]]
