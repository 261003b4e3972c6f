"""A twin: a representative workload run on copies of its inputs under fresh random names.

A candidate that recognises a visible input by its argv, path, size or modification time and
answers from a stored table still has to compute the twin's answer: the twin's argv names files
it has never seen (fresh names, fresh mtimes) with the same content. Its output may mention the
file names, so a twin is compared baseline against candidate, never against the original.

A table keyed by the input's *content* (a hash of the bytes) still answers a copy. A workload
marked `twin = "lines"` gets a twin whose inputs also lose a random twentieth of their lines
after the first (a header stays), drawn per judgement: the content is new, the work nearly the
same, so an honest win reappears and a content-keyed table misses (docs/adr/0048). That table
still answers the lines that remain; a `twin = "mutated"` twin (the default) keeps every record
and changes most of them, each by the mutator of its kind (`inputs/mutate`), from the
judgement's seed, so a table kept per line or per field misses too (docs/adr/0058).
"""

from __future__ import annotations

import random
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.inputs.mutate import detect_kind, mutated_twin
from speedproof.judge.policy.evidence import TWIN_SUFFIX
from speedproof.manifest import Workload

# Random bytes in a copy's name: 64 bits, so no candidate can list the names ahead of time.
NAME_BYTES = 8
READ_ONLY = 0o444
# A "lines" twin drops one line in this many after the first (at least one line of three or
# more): a 5 % smaller input moves an honest win by well under the carry-over margin (a quarter
# of the win), and C(n, n/20) subsets leave no table of answers a chance.
DROP_ONE_IN = 20


def twin_id(workload_id: str) -> str:
    """`novel` → `novel~twin`."""
    return workload_id + TWIN_SUFFIX


def is_twin(workload_id: str) -> bool:
    return workload_id.endswith(TWIN_SUFFIX)


def declared_inputs(workload: Workload) -> list[str]:
    """The workload's declared input files and stdin, each once, in manifest order."""
    named = [*workload.files, *([workload.stdin] if workload.stdin else [])]
    return list(dict.fromkeys(named))


Change = Callable[[str, bytes], bytes]


def fresh_copy(source: Path, folder: Path, *, change: Change | None = None) -> Path:
    """Copy `source` into `folder` under a random name that keeps its suffixes (a program may
    read `.csv` differently from `.txt`); the copy is read-only and has a fresh mtime. With
    `change`, the copy holds what it makes of (the file's name, its bytes)."""
    if not source.is_file():
        raise InfrastructureError(f"declared input {source} is not a readable file")
    suffix = "".join(PurePosixPath(source.name).suffixes)
    target = folder / (secrets.token_hex(NAME_BYTES) + suffix)
    if change is not None:
        target.write_bytes(change(source.name, source.read_bytes()))
    else:
        shutil.copyfile(source, target)
    target.chmod(READ_ONLY)
    return target


def fewer_lines(content: bytes) -> bytes:
    """`content` less a random twentieth of its lines after the first (at least one when there
    are three or more), the rest in their order and byte for byte."""
    lines = content.splitlines(keepends=True)
    if len(lines) < 3:
        return content
    count = max(1, (len(lines) - 1) // DROP_ONE_IN)
    chooser = secrets.SystemRandom()
    dropped = set(chooser.sample(range(1, len(lines)), count))
    return b"".join(line for index, line in enumerate(lines) if index not in dropped)


def twin_change(
    workload: Workload, rng: random.Random, keep: frozenset[bytes] = frozenset()
) -> Change | None:
    """How `workload`'s twin changes each input's bytes: by its `twin` kind, with `rng` (drawn
    from the judgement's seed) for a mutated twin, which leaves the words in `keep` alone."""
    if workload.twin == "lines":
        return lambda _name, content: fewer_lines(content)
    if workload.twin == "copy":
        return None

    def mutated(name: str, content: bytes) -> bytes:
        return mutated_twin(content, workload.mutator or detect_kind(name, content), rng, keep)

    return mutated


def make_twin(
    workload: Workload,
    root: Path,
    folder: Path,
    rng: random.Random | None = None,
    keep: frozenset[bytes] = frozenset(),
) -> Workload | None:
    """The twin of `workload` with its inputs copied into `folder` (created), or None when it
    declares no input. Arguments equal to a declared input path name the copy instead. A
    mutated twin draws its changes from `rng` (a fresh system one when none is given) and
    leaves the program's own words (`keep`) as they are."""
    declared = declared_inputs(workload)
    if not declared:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    change = twin_change(workload, rng or random.Random(secrets.randbits(64)), keep)
    # A twin whose inputs all came out byte for byte (`twin = "copy"`, binary inputs,
    # `mutator = "none"`) is a copy, and seen input like one: a table keyed by content answers it.
    kept: list[bool] = []

    def noted(name: str, content: bytes) -> bytes:
        made = content if change is None else change(name, content)
        kept.append(made == content)
        return made

    copies = {name: str(fresh_copy(root / name, folder, change=noted)) for name in declared}
    same = all(kept)
    # model_copy skips validation on purpose: the `~` of a twin id is not a manifest id's.
    return workload.model_copy(
        update={
            "id": twin_id(workload.id),
            "tier": "holdout",
            "args": [copies.get(arg, arg) for arg in workload.args],
            "stdin": copies[workload.stdin] if workload.stdin else None,
            "files": list(copies.values()),
            "twin": "copy" if same else workload.twin,
        }
    )
