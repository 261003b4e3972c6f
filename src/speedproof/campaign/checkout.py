"""The current parent revision as the proposers see it: a read-only checkout and its hot list.

One throwaway worktree at the newest accepted revision serves the whole time that revision is
the parent: discovery profiles it, the optimizer is shown its files, and answers are turned into
patches against it. Nothing writes into it (builds go to a scratch folder outside), and it is
removed on every way out, SIGTERM and Ctrl-C included (`workspace.worktree`). After an accept
the campaign opens a new one at the new parent and profiles again, because the accepted change
moved the hot spots and the line numbers.

Profiling may be widened by the explorer's workloads (`explorer`): discovery is then given a
copy of the manifest in which they are added as representative workloads, since discovery
profiles that tier only. The copy exists for discovery alone; the judge, the A/A check and
everything else keep the user's manifest, so an explorer workload is never measured.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from speedproof.discovery import DiscoveryError, HotFunction, Profile, discover
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import TargetToolchain, Tree
from speedproof.judge.measure.runner import run_invocation
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.judge.worktree.trees import worktree
from speedproof.manifest import Workload
from speedproof.manifest_loading import LoadedManifest


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
        return read_target_file(self.target_root, relative, self.rev)


def read_target_file(root: Path, relative: str, rev: str) -> str:
    path = root / relative
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InfrastructureError(f"cannot read {relative} at {rev[:12]}: {exc}") from exc


def _same(a: str, b: str) -> bool:
    """`pkg.mod.f` and `mod.f` or `f` name the same function (profilers qualify differently)."""
    return a.endswith("." + b) or b.endswith("." + a)


@dataclass(frozen=True)
class ParentTree:
    """The parent's worktree before it is profiled: profile it, or try workloads on it."""

    loaded: LoadedManifest
    rev: str
    worktree: Path
    target_rel: Path
    scratch: Path
    sandbox: Sandbox
    toolchain: TargetToolchain

    @property
    def target_root(self) -> Path:
        return self.worktree / self.target_rel

    def profiled(self, extra: Sequence[Workload] = ()) -> ParentCheckout:
        """Discovery on the representative workloads, plus `extra` (profiling only)."""
        loaded = widened(self.loaded, extra) if extra else self.loaded
        out = self.scratch / ("profile-widened" if extra else "profile")
        tree = Tree("baseline", self.worktree, self.target_root, out)
        profile = discover(loaded, tree, sandbox=self.sandbox, toolchain=self.toolchain)
        return ParentCheckout(self.rev, self.worktree, self.target_rel, profile)

    def probe(self, workloads: Sequence[Workload]) -> dict[str, str]:
        """Workload id -> why one run of it fails here (exit status, timeout); {} if all run.

        A workload that fails would make discovery fail, and with it the campaign, so each is
        run once before it is profiled.
        """
        if not workloads:
            return {}
        tree = Tree("baseline", self.worktree, self.target_root, self.scratch / "probe")
        built = self.toolchain.build(tree)
        if not built.ok or built.program is None:
            raise DiscoveryError(f"the parent {self.rev[:12]} does not build:\n{built.log[-2000:]}")
        prefix = tuple(self.loaded.manifest.target.prefix)
        failed: dict[str, str] = {}
        for workload in workloads:
            invocation = Invocation(built.program, workload, prefix)
            result = run_invocation(invocation, sandbox=self.sandbox, timeout_s=workload.timeout_s)
            if result.timed_out:
                failed[workload.id] = f"one run timed out after {workload.timeout_s:g} s"
            elif result.exit_code != workload.expected_exit:
                tail = result.tail(400).strip()
                failed[workload.id] = f"one run exited {result.exit_code}" + (
                    f": {tail}" if tail else ""
                )
        return failed


def widened(loaded: LoadedManifest, extra: Sequence[Workload]) -> LoadedManifest:
    """A copy of the manifest for discovery only, with `extra` as representative workloads."""
    for workload in extra:
        if workload.tier != "representative":
            raise InfrastructureError(f"extra workload {workload.id!r} is not profiled")
    manifest = loaded.manifest.model_copy(
        update={"workloads": [*loaded.manifest.workloads, *extra]}
    )
    return loaded.model_copy(update={"manifest": manifest})


@contextmanager
def parent_tree(
    loaded: LoadedManifest,
    *,
    repo: Path,
    rev: str,
    sandbox: Sandbox,
    toolchain: TargetToolchain,
) -> Iterator[ParentTree]:
    target_rel = loaded.root.resolve().relative_to(repo)
    with (
        scratch_folder() as scratch,
        worktree(repo, rev) as tree,
    ):
        yield ParentTree(loaded, tree.rev, tree.path, target_rel, scratch, sandbox, toolchain)
