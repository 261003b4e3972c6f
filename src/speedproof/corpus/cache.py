"""A content-addressed, resumable record of verdicts.

The key is the SHA-256 of everything the verdict depends on: the reference source, the
candidate, the case's inputs and input spec, the verification settings and `verifier_digest()`
(and, for a batch row, its seed). A re-run skips every pair whose key is recorded; a changed
verifier changes every key, so all pairs are verified again. Generation records passing verdicts
only (a failure aborts it anyway); a seeded batch (`fn verify --batch`) records every judged
verdict, since one seed always gives the same one. One JSON line each, appended with fsync by
the driver alone (workers return verdicts, they never write here), so an interrupted run loses
at most the verdicts in flight.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from speedproof.corpus.jsonl import append_rows, drop_torn_tail, dumps, read_rows
from speedproof.functions.case import Case


def pair_key(case: Case, fast_source: str, verifier: str, *, random_count: int, runs: int) -> str:
    payload = {
        "reference": case.reference_source,
        "fast": fast_source,
        "function_name": case.function_name,
        "edge_inputs": case.edge_inputs,
        "benchmark_inputs": case.benchmark_inputs,
        "benchmark_specs": [spec.model_dump(mode="json") for spec in case.benchmark_specs],
        "input_spec": case.input_spec.model_dump(mode="json"),
        "verifier": verifier,
        "random_count": random_count,
        "runs": runs,
    }
    return hashlib.sha256(dumps(payload).encode("utf-8")).hexdigest()


def verdict_key(
    case: Case, kind: str, text: str, seed: int, verifier: str, *, random_count: int, runs: int
) -> str:
    """The key of one seeded verification of a candidate (`kind` source or patch) on `case`."""
    payload = {
        "case": case.model_dump(mode="json"),
        "kind": kind,
        "text": text,
        "seed": seed,
        "verifier": verifier,
        "random_count": random_count,
        "runs": runs,
    }
    return hashlib.sha256(dumps(payload).encode("utf-8")).hexdigest()


class VerificationCache:
    """Verdicts by key, backed by a JSON-lines file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._rows: dict[str, dict[str, Any]] = {}
        if path is not None:
            drop_torn_tail(path)
            for row in read_rows(path):
                self._rows[str(row["key"])] = row

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._rows.get(key)

    def record(self, key: str, case_id: str, verdict: dict[str, Any]) -> dict[str, Any]:
        row = {"key": key, "case_id": case_id, "recorded_at": time.time(), **verdict}
        self._rows[key] = row
        if self.path is not None:
            append_rows(self.path, [row])
        return row
