"""From the one command a user gives, the workloads a verdict can rest on.

One workload let a behaviour change through on sqlparse until a second was added, and a manifest
without a holdout has no input a proposer never saw. From a command with one input (a file it
names, or its stdin) init derives, and says how in the manifest:

- **a second representative workload**: the same command on another file beside the input with
  the same suffix and a size within `SIZE_RATIO` of it (the closest in size), the project's own
  data; else, for a text input, on `<stem>-mutated<suffix>` beside it: the input with nine
  records in ten changed and its words spelt anew by the twins' own mutator
  (`inputs/mutate`, docs/adr/0058), keeping the words the program spells itself (docs/adr/0068),
  so it costs what the input costs. Flags read from `--help` are not tried: nothing tells a flag
  that writes a file or changes the output's shape from one that does not.
- **a holdout**: the input mutated again, with another seed, written to a folder outside the
  repository (`<repository>-speedproof-holdout/`, `[holdout] dir`), read by a holdout workload
  through `{holdout}`. The user's input is never edited: the holdout is generated, not cut out.
- **twins**: a text input's representative workloads declare `twin = "mutated"`; a binary one's
  twin would be a copy of the same bytes, which init says it could not do better than.

What it cannot derive it says, in `Derived.missing`: one line each, with how the user adds it.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from speedproof.init.model import Project, WorkloadDraft
from speedproof.init.workload import repository_of, workload_id
from speedproof.judge.inputs.mutate.kinds import SNIFF_BYTES, Kind, detect_kind
from speedproof.judge.inputs.mutate.make import mutated_twin
from speedproof.judge.inputs.program_words import program_words
from speedproof.manifest import HOLDOUT_TOKEN

# A sibling file is representative when its size is within 4x of the input's either way: its run
# then lasts about as long (the bundled examples' inputs differ by 1.5-2.5x).
SIZE_RATIO = 4.0
# Fixed seeds: init run twice writes the same files, so a rerun with --force changes nothing.
VARIANT_SEED = 77
HOLDOUT_SEED = 7707
HOLDOUT_SUFFIX = "-speedproof-holdout"
_TEXT_KINDS = frozenset({"lines", "csv", "json", "jsonl"})


@dataclass(frozen=True)
class DerivedWorkload:
    id: str
    tier: str
    args: tuple[str, ...]
    files: tuple[str, ...] = ()
    stdin: str | None = None
    # `twin = "mutated"` declared (a text input); None leaves the key out.
    twin: str | None = None
    # How it was derived, for the comment above it.
    how: str = ""


@dataclass(frozen=True)
class Derived:
    workloads: tuple[DerivedWorkload, ...] = ()
    # `[holdout] dir` as the manifest writes it (relative to the manifest's folder).
    holdout_dir: str | None = None
    # The first workload's twin, when its input is text.
    twin: str | None = None
    twin_how: str = ""
    # Files init wrote: inside the repository (to commit) and in the holdout folder.
    written: tuple[str, ...] = ()
    missing: tuple[str, ...] = field(default=())


def derive(project: Project, draft: WorkloadDraft | None) -> Derived:
    """What init derives from `draft`; nothing, with the reason, when it cannot."""
    if draft is None:
        return Derived(missing=("workloads: init was given no command after `--`",))
    named = [*draft.files, *([draft.stdin] if draft.stdin else [])]
    if len(named) != 1:
        how = "names no input file" if not named else f"names {len(named)} inputs"
        return Derived(
            missing=(
                f"a second workload, a holdout and twins: the command {how}, and init derives "
                "them from a command with one input; add a [[workloads]] entry on another "
                "input, and a holdout as docs/manifest.md shows",
            )
        )
    return _Deriver(project, draft, named[0]).run()


@dataclass
class _Deriver:
    project: Project
    draft: WorkloadDraft
    input: str
    missing: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    _keep: frozenset[bytes] | None = None

    def _id(self, path: Path) -> str:
        """The file's stem as an id, told apart from the draft's (`shop.1.log` and `shop.2.log`
        both read `shop`)."""
        found = workload_id([path.name], None, path.name)
        return f"{found}-2" if found == self.draft.id else found

    def run(self) -> Derived:
        path = (self.project.root / self.input).resolve()
        content = path.read_bytes()
        kind = detect_kind(path.name, content)
        text = kind in _TEXT_KINDS
        workloads = [w for w in (self._second(path, content, kind),) if w is not None]
        holdout = self._holdout(path, content, kind) if text else None
        if holdout is None and not text:
            self.missing.append(
                f"a holdout and a twin with new content: {self.input} is binary, which the "
                "mutator keeps as it is; add a holdout input of your own ([holdout] dir and a "
                "holdout workload, docs/manifest.md)"
            )
        twin, twin_how = None, ""
        if text:
            twin = "mutated"
            twin_how = (
                f"its twin is mutated: {self.input} is text ({kind}), so each judgement makes a "
                "copy with nine records in ten changed and its words spelt anew"
            )
        workloads += [w for w in (holdout,) if w is not None]
        folder = self._holdout_folder() if holdout is not None else None
        return Derived(
            workloads=tuple(workloads),
            holdout_dir=None if folder is None else _relative(folder, self.project.root),
            twin=twin,
            twin_how=twin_how,
            written=tuple(self.written),
            missing=tuple(self.missing),
        )

    def _second(self, path: Path, content: bytes, kind: Kind) -> DerivedWorkload | None:
        sibling = _sibling(path, len(content))
        if sibling is not None:
            name = _relative(sibling, self.project.root)
            sniffed = detect_kind(sibling.name, sibling.read_bytes()[:SNIFF_BYTES])
            return self._on(
                name,
                self._id(sibling),
                "representative",
                f"the same command on {name}, another {path.suffix or 'suffix-less'} "
                f"file beside {self.input}, within {SIZE_RATIO:g}x of its size",
                twin="mutated" if sniffed in _TEXT_KINDS else None,
            )
        if kind not in _TEXT_KINDS:
            self.missing.append(
                f"a second representative workload: no file beside {self.input} has its suffix "
                f"and a size within {SIZE_RATIO:g}x, and a binary input cannot be mutated; add a "
                "[[workloads]] entry with another input a user runs"
            )
            return None
        variant = path.with_name(f"{path.stem}-mutated{path.suffix}")
        variant.write_bytes(self._mutated(content, kind, VARIANT_SEED))
        name = _relative(variant, self.project.root)
        self.written.append(name)
        return self._on(
            name,
            self._id(variant),
            "representative",
            f"the same command on {name}, which init wrote: {self.input} with nine records in "
            f"ten changed and its words spelt anew (seed {VARIANT_SEED}), the program's own "
            "words kept, as no other file beside it has its suffix and size; replace it with "
            "another real input when you have one",
            twin="mutated",
        )

    def _holdout(self, path: Path, content: bytes, kind: Kind) -> DerivedWorkload:
        folder = self._holdout_folder()
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / path.name
        target.write_bytes(self._mutated(content, kind, HOLDOUT_SEED))
        self.written.append(str(target))
        where = f"{HOLDOUT_TOKEN}/{path.name}"
        return self._on(
            where,
            f"{self.draft.id}-holdout",
            "holdout",
            f"the same command on {path.name} in the holdout folder outside the repository, "
            f"which init wrote: {self.input} mutated with another seed ({HOLDOUT_SEED}); no "
            "proposer sees it, and an accept must carry over to it",
        )

    def _holdout_folder(self) -> Path:
        top = repository_of(self.project.root) or self.project.root
        return top.parent / f"{top.name}{HOLDOUT_SUFFIX}"

    def _mutated(self, content: bytes, kind: Kind, seed: int) -> bytes:
        if self._keep is None:
            # Read once: the variant and the holdout keep the same words.
            inputs = {(self.project.root / self.input).resolve()}
            language = self.project.language
            self._keep = program_words(self.project.root, language, lambda p: p in inputs)
        return mutated_twin(content, kind, random.Random(seed), self._keep)

    def _on(
        self, name: str, ident: str, tier: str, how: str, twin: str | None = None
    ) -> DerivedWorkload:
        """The draft's command with its one input replaced by `name`."""
        args = tuple(_replaced(a, self.input, name) for a in self.draft.args)
        in_repo = not name.startswith(HOLDOUT_TOKEN)
        if self.draft.stdin:
            return DerivedWorkload(ident, tier, args, (), name, twin, how)
        return DerivedWorkload(ident, tier, args, (name,) if in_repo else (), None, twin, how)


def _replaced(arg: str, old: str, new: str) -> str:
    if arg == old:
        return new
    option, equals, value = arg.partition("=")
    return f"{option}={new}" if equals and value == old else arg


def _sibling(path: Path, size: int) -> Path | None:
    """The file beside `path` with its suffix closest to it in size, within `SIZE_RATIO`."""
    found: list[tuple[float, str, Path]] = []
    for other in path.parent.iterdir():
        if other == path or other.name.startswith(".") or other.is_symlink():
            continue
        if not other.is_file() or other.suffix != path.suffix:
            continue
        if other.name.endswith(f"-mutated{path.suffix}"):
            continue
        bytes_ = other.stat().st_size
        if size and bytes_ and abs(math.log(bytes_ / size)) <= math.log(SIZE_RATIO):
            found.append((abs(math.log(bytes_ / size)), other.name, other))
    return min(found)[2] if found else None


def _relative(path: Path, root: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def derived_inputs(derived: Derived) -> Sequence[str]:
    """The files init wrote inside the repository: the user commits them with the manifest."""
    return [w for w in derived.written if not Path(w).is_absolute()]
