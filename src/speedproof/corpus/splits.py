"""Split files: one JSON-lines file of cases per split, and a manifest with checksums and uses.

Layout of a corpus folder:
  staging.jsonl     every verified row (split, case, verdict), written by `corpus generate`
  generation.json   the generation settings (seed, sizes, verifier settings)
  <split>.jsonl     one `Case` per line, for train, dev, frozen_seen, frozen_heldout
  manifest.json     SHA-256 of each split file, counts, families, templates, allowed and
                    forbidden uses of each split, kill rates per family
  adequacy.jsonl    each case's adequacy figures as measured when it was admitted
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from speedproof.corpus.errors import CorpusError
from speedproof.corpus.generate import GenerationConfig, StagedRow
from speedproof.corpus.jsonl import read_rows, sha256_file, write_rows
from speedproof.corpus.literals import SPLITS, SplitName
from speedproof.functions.case import Case

MANIFEST = "manifest.json"
STAGING = "staging.jsonl"
GENERATION = "generation.json"
# Per case: mutation kill rate, live and killed mutants, distinct outputs, top share, hit share.
ADEQUACY = "adequacy.jsonl"
# Format 2 (corpus v2): benchmark inputs are specs drawn per verification, and every case has
# passed the adequacy bar. Format 1 (corpus v1, fixed benchmark inputs) stays readable.
FORMAT = "speedproof-fn-corpus/3"
FORMATS = frozenset({"speedproof-fn-corpus/1", "speedproof-fn-corpus/2", FORMAT})

USES: dict[SplitName, dict[str, list[str]]] = {
    "train": {
        "allowed": ["teacher collection", "SFT rows", "training"],
        "forbidden": ["reporting a score as evaluation", "checkpoint selection"],
    },
    "dev": {
        "allowed": ["checkpoint selection", "data-mix and prompt decisions"],
        "forbidden": ["never train", "never collect teacher turns for training", "SFT rows"],
    },
    "frozen_seen": {
        "allowed": ["one final measurement of an already selected checkpoint"],
        "forbidden": [
            "never train",
            "never select checkpoints",
            "never tune prompts, data mixes or hyperparameters",
            "never collect teacher turns",
        ],
    },
    "frozen_heldout": {
        "allowed": ["one final measurement of an already selected checkpoint"],
        "forbidden": [
            "never train",
            "never select checkpoints",
            "never tune prompts, data mixes or hyperparameters",
            "never collect teacher turns",
        ],
    },
}


def split_path(folder: Path, split: str) -> Path:
    return folder / f"{split}.jsonl"


def write_staging(
    folder: Path, rows: Sequence[StagedRow], config: GenerationConfig, redrawn: int = 0
) -> None:
    """The verified rows and the settings; `redrawn` counts drafts the adequacy bar refused."""
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / STAGING, [row.to_json() for row in rows])
    settings = {
        "seed": config.seed,
        "sizes": dict(config.sizes),
        "random_count": config.random_count,
        "runs": config.runs,
        "redrawn_below_adequacy_bar": redrawn,
    }
    (folder / GENERATION).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def read_staging(folder: Path) -> tuple[list[StagedRow], dict[str, Any]]:
    path = folder / STAGING
    if not path.exists():
        raise CorpusError(f"{path} does not exist; run `speedproof fn corpus generate` first")
    rows = []
    for number, raw in enumerate(read_rows(path), start=1):
        try:
            split = raw["split"]
            if split not in SPLITS:
                raise CorpusError(f"{path}:{number}: unknown split {split!r}")
            rows.append(StagedRow(split, Case.model_validate(raw["case"]), raw["verification"]))
        except (KeyError, ValidationError) as err:
            raise CorpusError(f"{path}:{number}: not a staged row: {err}") from err
        if raw["verification"].get("status") != "passed":
            raise CorpusError(f"{path}:{number}: case {raw['case'].get('id')} is not verified")
    settings = json.loads((folder / GENERATION).read_text(encoding="utf-8"))
    return rows, settings


def write_splits(folder: Path) -> dict[str, Any]:
    """Write each split's file and the manifest from the staging file; returns the manifest."""
    rows, settings = read_staging(folder)
    splits: dict[str, Any] = {}
    digests: set[str] = set()
    for split in SPLITS:
        chosen = [row for row in rows if row.split == split]
        path = split_path(folder, split)
        write_rows(path, [row.case.model_dump(mode="json") for row in chosen])
        digests |= {str(row.verification.get("verifier_digest")) for row in chosen}
        splits[split] = {
            "file": path.name,
            "sha256": sha256_file(path),
            "cases": len(chosen),
            "families": dict(sorted(Counter(r.case.family for r in chosen).items())),
            "templates": sorted({r.case.template for r in chosen}),
            "allowed_uses": USES[split]["allowed"],
            "forbidden_uses": USES[split]["forbidden"],
        }
    manifest = {
        "format": FORMAT,
        "generation": settings,
        "verifier_digests": sorted(digests),
        "splits": splits,
        "adequacy": adequacy_summary(rows),
    }
    figures = [
        {"case_id": row.case.id, "family": row.case.family, **row.verification["adequacy"]}
        for row in rows
        if row.verification.get("adequacy")
    ]
    if figures:
        write_rows(folder / ADEQUACY, figures)
        manifest["adequacy_file"] = {"file": ADEQUACY, "sha256": sha256_file(folder / ADEQUACY)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def adequacy_summary(rows: Sequence[StagedRow]) -> dict[str, dict[str, Any]]:
    """Per family: cases, mutants killed of those not presumed equivalent, the kill rate."""
    families: dict[str, dict[str, Any]] = {}
    for row in rows:
        figures = row.verification.get("adequacy")
        if not figures:
            continue
        entry = families.setdefault(
            row.case.family, {"cases": 0, "killed": 0, "live_mutants": 0, "lowest_kill_rate": 1.0}
        )
        entry["cases"] += 1
        entry["killed"] += figures["killed"]
        entry["live_mutants"] += figures["live_mutants"]
        entry["lowest_kill_rate"] = min(entry["lowest_kill_rate"], figures["kill_rate"])
    for entry in families.values():
        live = entry["live_mutants"]
        entry["kill_rate"] = round(entry["killed"] / live, 4) if live else 1.0
    return dict(sorted(families.items()))


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise CorpusError(f"cannot read corpus manifest {path}: {err}") from err
    if manifest.get("format") not in FORMATS:
        raise CorpusError(
            f"{path}: format is {manifest.get('format')!r}, expected one of {sorted(FORMATS)}"
        )
    return manifest


def superseded_by(folder: Path) -> str | None:
    """The corpus that replaces this one, when its manifest says so (v1 says v2)."""
    value = read_manifest(folder).get("superseded_by")
    return str(value) if value else None


def load_cases(path: Path) -> list[Case]:
    """The cases of one split file (each line validated, `ast_hash` re-checked)."""
    cases = []
    for number, raw in enumerate(read_rows(path), start=1):
        try:
            cases.append(Case.model_validate(raw))
        except ValidationError as err:
            raise CorpusError(f"{path}:{number}: not a case: {err}") from err
    return cases


def load_split(folder: Path, split: str) -> list[Case]:
    path = split_path(folder, split)
    if not path.exists():
        raise CorpusError(f"{path} does not exist")
    return load_cases(path)


def load_all(folder: Path) -> dict[str, list[Case]]:
    return {split: load_split(folder, split) for split in SPLITS}
