"""Shared helpers of the corpus tests (no tests here)."""

from __future__ import annotations

from pathlib import Path

import typer

from speedproof.corpus.cli import register
from speedproof.corpus.generate import GenerationConfig, StagedRow, TrustedPair, build_pairs
from speedproof.corpus.splits import write_splits, write_staging

SMALL = GenerationConfig(
    seed=11, sizes={"train": 16, "dev": 8, "frozen_seen": 8, "frozen_heldout": 3}
)


def unverified_folder(folder: Path, config: GenerationConfig = SMALL) -> list[TrustedPair]:
    """A split folder staged WITHOUT the verifier: only for tests of ids, files and audits."""
    pairs = build_pairs(config)
    rows = [
        StagedRow(p.split, p.case, {"status": "passed", "verifier_digest": "unverified-test"})
        for p in pairs
    ]
    write_staging(folder, rows, config)
    write_splits(folder)
    return pairs


def fn_app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


# --- a small verified corpus, shared through one verification cache per test session ----------

PIPELINE = GenerationConfig(
    seed=5, sizes={"train": 4, "dev": 6, "frozen_seen": 2, "frozen_heldout": 3}
)


def verified_folder(folder: Path, cache: Path, config: GenerationConfig = PIPELINE) -> list[
    TrustedPair
]:  # fmt: skip
    """Generate, verify (through `cache`) and split a corpus with the real verifier."""
    from speedproof.corpus.cache import VerificationCache
    from speedproof.corpus.generate import stage

    rows, _ = stage(config, VerificationCache(cache))
    write_staging(folder, rows, config)
    write_splits(folder)
    return build_pairs(config)


def wrong_constant(source: str) -> str:
    """The source with its prelude's first constant off by one: same speed, other answers."""
    lines = source.splitlines()
    name, _, value = lines[1].partition(" = ")
    lines[1] = f"{name} = {int(value) + 1}"
    return "\n".join(lines) + "\n"


def padded(source: str) -> str:
    """The reference with one more (useless) statement: correct, same loops, not faster."""
    lines = source.splitlines()
    return "\n".join([lines[0], "    unused = 0", *lines[1:]]) + "\n"


def wrapped(source: str) -> str:
    """The reference run inside a one-pass loop: correct, new loop structure, not faster."""
    lines = source.splitlines()
    return "\n".join([lines[0], "    for once in [0]:", *("    " + x for x in lines[1:])]) + "\n"
