"""A content-addressed, resumable record of verified pairs.

The key is the SHA-256 of everything the verdict depends on: the reference source, the fast
source, the case's inputs and input spec, the verification settings and `verifier_digest()`. A
re-run skips every pair whose key is recorded; a changed verifier changes every key, so all pairs
are verified again. Only passing verdicts are recorded (a failure aborts generation anyway), one
JSON line each, appended with fsync, so an interrupted run loses at most the pair in flight.
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


class VerificationCache:
    """Passed verdicts by pair key, backed by a JSON-lines file."""

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
