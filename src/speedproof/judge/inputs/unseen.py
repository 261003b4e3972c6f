"""The workloads of one judgement, with every input the candidate cannot have seen made ready.

`unseen_inputs` makes one scratch folder per judgement outside every worktree and fills it:

- each generated workload's `{out}` folder, written by its generator from the judgement's seed;
- a copy of the holdout folder at a fresh path, named by `{holdout}` in holdout workloads;
- a twin of every representative workload that declares inputs and does not generate them.

Each folder is visible only to the runs of the workloads that read it (`UnseenInputs.visible`):
the holdout copy to holdout runs, a twin's folder to the twin. Builds and tests see none of it.
Everything is removed when the judgement ends.
"""

from __future__ import annotations

import functools
import random
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.program import Program
from speedproof.ground.toolchain import Context, Tree
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.inputs.generated import READ_ONLY, Generated, filled, generate
from speedproof.judge.inputs.program_words import program_words
from speedproof.judge.inputs.twins import NAME_BYTES, is_twin, make_twin
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.manifest import HOLDOUT_TOKEN, OUT_TOKEN, Workload
from speedproof.manifest_loading import LoadedManifest


@dataclass(frozen=True)
class UnseenInputs:
    """The judgement's workloads (placeholders filled, twins added) and who sees which folder."""

    workloads: tuple[Workload, ...]
    folders: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    generated: tuple[Generated, ...] = ()

    def visible(self, program: Program, workload: Workload) -> Program:
        """`program` as it must run `workload`: able to read that workload's folders."""
        return show(program, self.folders.get(workload.id, ()))

    @property
    def twins(self) -> tuple[str, ...]:
        return tuple(w.id for w in self.workloads if is_twin(w.id))


def show(program: Program, folders: Sequence[Path]) -> Program:
    """`program` with `folders` bound read-only into its sandbox."""
    if not folders:
        return program
    return replace(program, readable=(*program.readable, *folders))


def holdout_source(loaded: LoadedManifest, override: Path | None) -> Path | None:
    """The holdout folder: the command line's, else the manifest's `[holdout] dir`."""
    if override is not None:
        return override.resolve()
    named = loaded.manifest.holdout.dir
    return None if named is None else (loaded.root / named).resolve()


def reads_holdout(workload: Workload) -> bool:
    uses = [*workload.args, *([workload.stdin] if workload.stdin else [])]
    return any(HOLDOUT_TOKEN in part for part in uses)


@dataclass
class _Maker:
    scratch: Path
    context: Context
    baseline: Tree
    seed: int
    holdout: Path | None
    # The baseline's own words, which a mutated twin keeps (`program_words`): read once, and
    # only when a workload makes a mutated twin (a copy or lines twin needs none of them).
    keep: Callable[[], frozenset[bytes]] = frozenset
    folders: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    generated: list[Generated] = field(default_factory=list)
    _holdout_copy: Path | None = None

    def fresh(self) -> Path:
        folder = self.scratch / secrets.token_hex(NAME_BYTES)
        folder.mkdir()
        return folder

    def resolve(self, workload: Workload) -> Workload:
        values: dict[str, str] = {}
        seen: list[Path] = []
        if workload.generate:
            out = self.fresh()
            self.generated.append(
                generate(
                    workload, context=self.context, tree=self.baseline, out=out, seed=self.seed
                )
            )
            values[OUT_TOKEN] = str(out)
            seen.append(out)
        if reads_holdout(workload):
            copy = self.holdout_copy(workload)
            values[HOLDOUT_TOKEN] = str(copy)
            seen.append(copy)
        if not values:
            return workload
        self.folders[workload.id] = tuple(seen)
        return filled(workload, values)

    def holdout_copy(self, workload: Workload) -> Path:
        """The holdout folder copied once to a fresh path: a candidate can neither name it
        ahead of time nor change the user's files through a writable bind."""
        if self._holdout_copy is not None:
            return self._holdout_copy
        if self.holdout is None or not self.holdout.is_dir():
            where = "no holdout folder was given" if self.holdout is None else f"{self.holdout}"
            raise InfrastructureError(
                f"workload {workload.id!r} reads {HOLDOUT_TOKEN} inputs, but {where} is not a "
                "folder: pass --holdout-dir DIR or set [holdout] dir in the manifest"
            )
        copy = self.fresh() / "inputs"
        shutil.copytree(self.holdout, copy, symlinks=False)
        for path in copy.rglob("*"):
            if path.is_file():
                path.chmod(READ_ONLY)
        self._holdout_copy = copy
        return copy

    def twin(self, workload: Workload) -> Workload | None:
        if workload.tier != "representative" or workload.generate:
            return None
        folder = self.fresh()
        # A mutated twin's changes come from the judgement's seed (kept in its facts).
        rng = random.Random(f"{self.seed}:{workload.id}:twin")
        keep = self.keep() if workload.twin == "mutated" else frozenset()
        twin = make_twin(workload, self.baseline.root, folder, rng, keep)
        if twin is not None:
            self.folders[twin.id] = (folder,)
        return twin


def _program_words(loaded: LoadedManifest, baseline: Tree) -> frozenset[bytes]:
    """The baseline's own words, from every source file no rule protects as an input."""
    rules = ProtectedPaths.for_manifest(loaded)

    def protected(path: Path) -> bool:
        return rules.reason(path.relative_to(baseline.worktree).as_posix()) is not None

    return program_words(baseline.root, loaded.manifest.target.language, protected)


@contextmanager
def unseen_inputs(
    loaded: LoadedManifest,
    *,
    context: Context,
    baseline: Tree,
    seed: int,
    holdout_dir: Path | None = None,
) -> Iterator[UnseenInputs]:
    """The judgement's workloads with unseen inputs made; the folder goes when the block ends."""
    with scratch_folder("speedproof-unseen-") as scratch:
        maker = _Maker(
            scratch,
            context,
            baseline,
            seed,
            holdout_source(loaded, holdout_dir),
            functools.cache(lambda: _program_words(loaded, baseline)),
        )
        resolved = [maker.resolve(w) for w in loaded.manifest.workloads]
        twins = [t for w in resolved if (t := maker.twin(w)) is not None]
        yield UnseenInputs(tuple([*resolved, *twins]), dict(maker.folders), tuple(maker.generated))
