"""Nothing a candidate runs persists: each side in its own worktree and build folder, the runs
that may write (tests, behaviour) in disposable copies, and every later stage checked to have
left both untouched.

In the sandbox the tree and the build are read-only to every measured run and each declared
output file is a per-run copy outside the tree; unsandboxed, runs write the output files in the
tree, and those paths alone may change.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.program import Program, relocated
from speedproof.ground.sandbox import SandboxSpec, mount_list
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.outputs import place_outputs
from speedproof.judge.worktree import snapshot
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.judge.worktree.trees import worktree

# How each later stage is named when it wrote what it may not.
STAGE_WORDS = {
    "tests": "the test runs",
    "behaviour": "the behaviour runs",
    "measure": "the measured runs (instructions, timed pairs, holdouts)",
}


@dataclass
class Sides:
    baseline: Tree
    candidate: Tree
    # The judgement's private folder, outside both worktrees: build folders, output copies,
    # the disposable copies the tests run in.
    scratch: Path
    programs: dict[str, Program] = field(default_factory=dict)
    # Each side's worktree and build folder as the build left them; no later stage may change
    # them (`Judge._untouched`).
    snapshots: dict[str, tuple[snapshot.Snapshot, snapshot.Snapshot]] = field(default_factory=dict)

    def tree(self, side: str) -> Tree:
        return self.baseline if side == "baseline" else self.candidate


@dataclass(frozen=True)
class Isolation:
    """Where one target's judgements run and what their runs may leave behind."""

    # The target folder inside the repository, and its declared output files ([behaviour]
    # output_files, relative to the target folder).
    target_rel: Path
    outputs: tuple[str, ...]
    sandboxed: bool

    @contextmanager
    def sides(self, repo: Path, base_rev: str) -> Iterator[Sides]:
        """Two fresh worktrees at `base_rev` and a scratch folder, all removed afterwards."""
        with ExitStack() as stack:
            scratch = stack.enter_context(scratch_folder())
            base = stack.enter_context(worktree(repo, base_rev)).path
            cand = stack.enter_context(worktree(repo, base_rev)).path
            yield Sides(
                baseline=Tree("baseline", base, base / self.target_rel, scratch / "baseline"),
                candidate=Tree("candidate", cand, cand / self.target_rel, scratch / "candidate"),
                scratch=scratch,
            )

    @contextmanager
    def copies(
        self, sides: Sides, stage: str, *, build: bool = False
    ) -> Iterator[tuple[Tree, Tree]]:
        """Disposable copies of both worktrees, each with an empty build folder, or with a copy
        of the build (`build`).

        Tests write where they like (reports, caches, fixtures), and the behaviour runs may try
        to: they do it in a copy that is thrown away, so nothing they leave can reach a measured
        run, and the copy shows what they wrote.
        """
        copies: list[Tree] = []
        for tree in (sides.baseline, sides.candidate):
            holder = Path(tempfile.mkdtemp(prefix=f"{stage}-{tree.side}-", dir=sides.scratch))
            folder = holder / "tree"
            shutil.copytree(tree.worktree, folder, symlinks=True)
            if build:
                shutil.copytree(tree.out, holder / "out", symlinks=True)
            copies.append(Tree(tree.side, folder, folder / self.target_rel, holder / "out"))
        try:
            yield copies[0], copies[1]
        finally:
            for made in copies:
                shutil.rmtree(made.worktree.parent, ignore_errors=True)

    def settle(self, sides: Sides) -> None:
        """Fix what each side's runs may write, then snapshot the worktrees and build folders."""
        for side, program in sides.programs.items():
            if self.sandboxed:
                outputs = sides.scratch / f"{side}-outputs"
                program = replace(program, outputs=outputs, output_files=self.outputs)
                place_outputs(program)
                sides.programs[side] = program
            tree, fresh = sides.tree(side), program.fresh_per_run
            sides.snapshots[side] = (
                snapshot.take(tree.worktree, fresh),
                snapshot.take(tree.out, fresh),
            )

    def mounts(self, tools: tuple[Path, ...]) -> list[str]:
        """What a workload run sees in the sandbox, as the ledger records it."""
        if not self.sandboxed:
            return ["none: unsandboxed, as --no-sandbox asked"]
        spec = SandboxSpec(
            readable=(*tools, Path("<worktree>"), Path("<build folder>")),
            files=tuple((Path("<run copy>"), Path(f"<worktree>/{f}")) for f in self.outputs),
        )
        return mount_list(spec)

    def written(self, before: tuple[snapshot.Snapshot, snapshot.Snapshot]) -> str | None:
        """What a side wrote in its tree or build folder beyond its declared outputs, in words;
        None when it wrote nothing there."""
        allowed = [str(self.target_rel / f) for f in self.outputs]
        wrote = snapshot.changed(before[0], snapshot.again(before[0]), allowed)
        where = ""
        if not wrote:
            wrote = snapshot.changed(before[1], snapshot.again(before[1]))
            where = "in its build folder"
        return snapshot.describe(wrote, where) if wrote else None


def relocated_copy(sides: Sides, copy: Tree) -> Program:
    """A side's program run from its writable copies of the tree and the build."""
    original = sides.tree(copy.side)
    program = relocated(sides.programs[copy.side], original.worktree, copy.worktree)
    return relocated(program, original.out, copy.out)


def wrote_reason(side: str, where: str, stage: str) -> str:
    """The candidate's reject reason for writing `where` during `stage`; a baseline that wrote
    there is the setup's fault, never a verdict."""
    if side == "baseline":
        raise InfrastructureError(
            f"the baseline wrote {where} during {STAGE_WORDS[stage]}; a workload may "
            "write only its declared output files ([behaviour] output_files), /tmp and $HOME"
        )
    return f"the candidate wrote {where} during {STAGE_WORDS[stage]}"
