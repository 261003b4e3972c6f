"""The current parent revision as the proposers see it: a read-only checkout and its hot list.

One throwaway worktree at the newest accepted revision serves the whole time that revision is
the parent: discovery profiles it, the optimizer is shown its files, and answers are turned into
patches against it. Nothing writes into it (builds go to a scratch folder outside), and it is
removed on every way out, SIGTERM and Ctrl-C included (`workspace.worktree`). After an accept
the campaign opens a new one at the new parent and profiles again, because the accepted change
moved the hot spots and the line numbers.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from speedproof.discovery import HotFunction, Profile, discover
from speedproof.errors import InfrastructureError
from speedproof.manifest import LoadedManifest
from speedproof.sandbox import Sandbox
from speedproof.toolchains.base import TargetToolchain, Tree
from speedproof.workspace import worktree


@dataclass(frozen=True)
class ParentCheckout:
    rev: str
    worktree: Path
    target_rel: Path
    profile: Profile

    @property
    def target_root(self) -> Path:
        return self.worktree / self.target_rel

    def hot(self, exclude: set[str]) -> list[HotFunction]:
        return [f for f in self.profile.functions if f.name not in exclude]

    def find(self, name: str, among: list[HotFunction]) -> HotFunction | None:
        """The hot function `name` means: its exact name, else the one it is a suffix of."""
        exact = [f for f in among if f.name == name]
        if exact:
            return exact[0]
        near = [f for f in among if _same(f.name, name)]
        return near[0] if len(near) == 1 else None

    def file_text(self, relative: str) -> str:
        path = self.target_root / relative
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InfrastructureError(f"cannot read {relative} at {self.rev[:12]}: {exc}") from exc


def _same(a: str, b: str) -> bool:
    """`pkg.mod.f` and `mod.f` or `f` name the same function (profilers qualify differently)."""
    return a.endswith("." + b) or b.endswith("." + a)


@contextmanager
def parent_checkout(
    loaded: LoadedManifest,
    *,
    repo: Path,
    rev: str,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
) -> Iterator[ParentCheckout]:
    target_rel = loaded.root.resolve().relative_to(repo)
    with (
        tempfile.TemporaryDirectory(prefix="speedproof-") as scratch,
        worktree(repo, rev) as tree,
    ):
        baseline = Tree("baseline", tree.path, tree.path / target_rel, Path(scratch) / "profile")
        profile = discover(loaded, baseline, sandbox=sandbox, toolchain=toolchain)
        yield ParentCheckout(
            rev=tree.rev, worktree=tree.path, target_rel=target_rel, profile=profile
        )
