"""Leakage audit: nothing a model is trained on may identify an evaluation case.

Checks, each reported as a `Leak` naming both sides:
  case_id      a case id in two groups (or twice in one)
  template     a template id in two groups
  ast_hash     an alpha-renamed AST hash (same program up to names) in two groups
  skeleton     a loop skeleton shared by train (or SFT rows) and any evaluation split, or by
               dev and frozen_seen (ADR 0015)
  family       a held-out family in train, dev, frozen_seen or SFT rows
  checksum     a split file whose SHA-256 differs from the manifest's

Groups on the training side (train, sft) may share with each other: SFT rows are made from
train cases. Every other pair of groups must be disjoint.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.corpus.families import HELDOUT
from speedproof.corpus.jsonl import sha256_file
from speedproof.corpus.skeleton import loop_skeleton
from speedproof.corpus.splits import load_all, read_manifest, split_path
from speedproof.functions.case import Case, ast_hash

TRAINING_SIDE = frozenset({"train", "sft"})
HELDOUT_FAMILIES = frozenset(f.name for f in HELDOUT)


@dataclass(frozen=True)
class Item:
    """What the audit needs of a case or of a training row."""

    case_id: str
    family: str
    template: str
    ast_hash: str
    skeleton: str

    @classmethod
    def of_case(cls, case: Case) -> Item:
        return cls(
            case.id, case.family, case.template, case.ast_hash, loop_skeleton(case.reference_source)
        )

    @classmethod
    def of_source(cls, case_id: str, family: str, template: str, source: str) -> Item:
        return cls(case_id, family, template, ast_hash(source), loop_skeleton(source))


@dataclass(frozen=True)
class Leak:
    kind: str
    value: str
    groups: tuple[str, ...]

    def render(self) -> str:
        return f"leak [{self.kind}] {self.value} in {', '.join(self.groups)}"


def _shared(kind: str, groups: Mapping[str, Sequence[Item]], attr: str) -> list[Leak]:
    where: dict[str, list[str]] = defaultdict(list)
    for name, items in groups.items():
        for value in sorted({getattr(item, attr) for item in items}):
            where[value].append(name)
    leaks = []
    for value, names in sorted(where.items()):
        if len(names) > 1 and not set(names) <= TRAINING_SIDE:
            leaks.append(Leak(kind, value, tuple(names)))
    return leaks


def _duplicates(groups: Mapping[str, Sequence[Item]]) -> list[Leak]:
    leaks = []
    for name, items in groups.items():
        if name == "sft":
            continue  # focused copies and replay repeat case ids on purpose
        counts = Counter(item.case_id for item in items)
        leaks += [Leak("case_id", cid, (name, name)) for cid, n in sorted(counts.items()) if n > 1]
    return leaks


# Pairs of groups whose loop skeletons must not meet: everything trained on against every
# evaluation split, and dev (used for selection) against the frozen seen-family split.
SKELETON_PAIRS = (
    ("train", "dev"),
    ("train", "frozen_seen"),
    ("train", "frozen_heldout"),
    ("dev", "frozen_seen"),
    ("sft", "dev"),
    ("sft", "frozen_seen"),
    ("sft", "frozen_heldout"),
)


def _skeletons(groups: Mapping[str, Sequence[Item]]) -> list[Leak]:
    leaks = []
    for left, right in SKELETON_PAIRS:
        a = {item.skeleton for item in groups.get(left, ())}
        b = {item.skeleton for item in groups.get(right, ())}
        leaks += [Leak("skeleton", s, (left, right)) for s in sorted(a & b)]
    return leaks


def _families(groups: Mapping[str, Sequence[Item]]) -> list[Leak]:
    leaks = []
    for name in ("train", "dev", "frozen_seen", "sft"):
        found = {item.family for item in groups.get(name, ())} & HELDOUT_FAMILIES
        leaks += [Leak("family", family, (name,)) for family in sorted(found)]
    return leaks


def audit_items(groups: Mapping[str, Sequence[Item]]) -> list[Leak]:
    """Every leak among the named groups (split names, plus `sft` for training rows)."""
    leaks = _duplicates(groups)
    leaks += _shared("case_id", groups, "case_id")
    leaks += _shared("template", groups, "template")
    leaks += _shared("ast_hash", groups, "ast_hash")
    leaks += _skeletons(groups)
    leaks += _families(groups)
    return leaks


def audit_cases(splits: Mapping[str, Iterable[Case]]) -> list[Leak]:
    return audit_items({name: [Item.of_case(c) for c in cases] for name, cases in splits.items()})


def audit_checksums(folder: Path) -> list[Leak]:
    manifest = read_manifest(folder)
    leaks = []
    for split, entry in manifest["splits"].items():
        actual = sha256_file(split_path(folder, split))
        if actual != entry["sha256"]:
            leaks.append(Leak("checksum", f"{entry['file']} is {actual[:16]}…", (split,)))
    return leaks


def audit_folder(folder: Path) -> list[Leak]:
    """Checksums against the manifest, then every leak across the folder's split files."""
    return audit_checksums(folder) + audit_cases(load_all(folder))
