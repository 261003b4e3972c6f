"""Variant workloads: a workload run on inputs nobody has seen, and with edge option values.

For each workload that declares input files or stdin, `count` content variants: each declared
input replaced by a variant its mutator makes (`inputs/mutate`) under a fresh random name in a
folder of its own, every argument that named the input naming the variant. Then argv variants:
each numeric option value of any workload (`-top 15`, `--bucket=50`, `-slow 0.2`) set to 0, 1,
-1 and a huge value, once per option and value across the manifest, on a small slice of that
workload's inputs, so that option validation a candidate deleted shows up as another exit
status or stderr. Everything is drawn from the judgement's seed, so a judgement's variants can
be made again from its ledger record.
"""

from __future__ import annotations

import functools
import random
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.judge.inputs.mutate import Variant, detect_kind, make_variant
from speedproof.judge.inputs.mutate.kinds import Kind
from speedproof.judge.inputs.mutate.make import small_slice
from speedproof.judge.inputs.twins import NAME_BYTES, declared_inputs, fresh_copy
from speedproof.manifest import Workload

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_OPTION = re.compile(r"^--?[A-Za-z][\w-]*$")
_JOINED = re.compile(r"^(--?[A-Za-z][\w-]*)=(-?\d+(\.\d+)?)$")
# 2^32: past any 32-bit count, and still a number every parser of a 64-bit one takes.
INT_EDGES = ("0", "1", "-1", "4294967296")
FLOAT_EDGES = ("0", "1", "-1", "1e300")


@dataclass(frozen=True)
class VariantRun:
    """One variant as a workload the sides run, the workload it comes from, and what it is."""

    workload: Workload
    origin: str
    description: str
    folder: Path
    argv: bool = False


def option_values(args: Sequence[str]) -> list[tuple[int, str, str]]:
    """(index, option, value) of each numeric option value: `-top 15` and `--top=15` both."""
    found: list[tuple[int, str, str]] = []
    for index, arg in enumerate(args):
        joined = _JOINED.match(arg)
        if joined:
            found.append((index, joined.group(1), joined.group(2)))
        elif index and _NUMBER.match(arg) and _OPTION.match(args[index - 1]):
            found.append((index, args[index - 1], arg))
    return found


def _kind(workload: Workload, name: str, content: bytes) -> Kind:
    return workload.mutator or detect_kind(name, content)


def _with_inputs(
    workload: Workload,
    root: Path,
    folder: Path,
    change: Callable[[str, bytes], bytes],
    *,
    ident: str,
    args: Sequence[str] | None = None,
) -> Workload:
    """`workload` under id `ident` with every declared input replaced by `change` of (its
    declared path, its bytes), in a fresh folder."""
    folder.mkdir(parents=True)
    copies = {
        name: str(fresh_copy(root / name, folder, change=_for(name, change)))
        for name in declared_inputs(workload)
    }
    # model_copy skips validation on purpose: a variant id's `#` is not a manifest id's.
    return workload.model_copy(
        update={
            "id": ident,
            "args": [copies.get(arg, arg) for arg in (workload.args if args is None else args)],
            "stdin": copies[workload.stdin] if workload.stdin else None,
            "files": list(copies.values()),
        }
    )


def _for(name: str, change: Callable[[str, bytes], bytes]) -> Callable[[str, bytes], bytes]:
    return lambda _base, content: change(name, content)


def _fresh(scratch: Path) -> Path:
    return scratch / secrets.token_hex(NAME_BYTES)


class _Descriptions:
    """What each input of one variant became, in words, as the mutators said."""

    def __init__(self) -> None:
        self.words: list[str] = []

    def keep(self, name: str, variant: Variant, several: bool) -> bytes:
        self.words.append(f"{name}: {variant.description}" if several else variant.description)
        return variant.content

    def text(self) -> str:
        return "; ".join(self.words) or "inputs as they are"


@dataclass(frozen=True)
class Recipe:
    """A variant not made yet: the gate's workers make it just before they run it, so that
    making one overlaps the other worker's runs, and a variant the budget never reaches is never
    made. Each draws from its own `random.Random`, seeded by the judgement's seed and its id."""

    ident: str
    origin: str
    make: Callable[[], VariantRun]
    argv: bool = False


def content_variants(
    workload: Workload, root: Path, scratch: Path, seed: str, count: int
) -> list[Recipe]:
    """`count` variants of `workload`'s inputs (none when every input's kind is "none")."""
    declared = declared_inputs(workload)
    kinds = {name: _kind(workload, name, (root / name).read_bytes()) for name in declared}
    if all(kind == "none" for kind in kinds.values()):
        return []

    def make(index: int) -> VariantRun:
        rng = random.Random(f"{seed}:{workload.id}:{index}")
        words = _Descriptions()

        def change(path: str, content: bytes) -> bytes:
            if kinds[path] == "none":
                return content
            variant = make_variant(content, kinds[path], rng, index)
            return words.keep(path, variant, len(declared) > 1)

        folder = _fresh(scratch)
        ident = f"{workload.id}#{index + 1}"
        varied = _with_inputs(workload, root, folder, change, ident=ident)
        return VariantRun(varied, workload.id, words.text(), folder)

    return [
        Recipe(f"{workload.id}#{i + 1}", workload.id, functools.partial(make, i))
        for i in range(count)
    ]


def argv_variants(
    workloads: Sequence[Workload], root: Path, scratch: Path, seed: str
) -> list[Recipe]:
    """Each numeric option value set to its edges, once per (option, edge) across `workloads`,
    on a small slice of the first workload's inputs that names the option."""
    made: list[Recipe] = []
    seen: set[tuple[str, str]] = set()
    for workload in workloads:
        for index, option, value in option_values(workload.args):
            for edge in FLOAT_EDGES if "." in value else INT_EDGES:
                if (option, edge) in seen or edge == value:
                    continue
                seen.add((option, edge))
                where = (index, option, edge)
                ident = f"{workload.id}#{option.lstrip('-')}={edge}"
                rng = random.Random(f"{seed}:{ident}")
                make = functools.partial(_argv_variant, workload, root, scratch, rng, where)
                made.append(Recipe(ident, workload.id, make, argv=True))
    return made


def _argv_variant(
    workload: Workload,
    root: Path,
    scratch: Path,
    rng: random.Random,
    where: tuple[int, str, str],
) -> VariantRun:
    index, option, edge = where
    args = list(workload.args)
    args[index] = f"{option}={edge}" if "=" in args[index] else edge
    words = _Descriptions()
    declared = declared_inputs(workload)

    def change(path: str, content: bytes) -> bytes:
        kind = _kind(workload, path, content)
        if kind == "none":
            return content
        return words.keep(path, small_slice(content, kind, rng), len(declared) > 1)

    folder = _fresh(scratch)
    ident = f"{workload.id}#{option.lstrip('-')}={edge}"
    varied = _with_inputs(workload, root, folder, change, ident=ident, args=args)
    return VariantRun(varied, workload.id, f"{option} {edge}, {words.text()}", folder, argv=True)
