"""`fn verify --batch`: many (case, candidate) rows verified on a cluster, one result row each.

An input row (JSON lines) names its case and its candidate:
  {"id": "r1", "case_id": "…", "patch": "<<<<<<< SEARCH …", "seed": 7}
  {"case": {…a case object…}, "candidate": "def solve(xs): …"}
`id` defaults to the row's line number; `case_id` is looked up in the corpus (corpus/v3 by
default); `candidate` is a whole function, `patch` a SEARCH/REPLACE or unified diff (a model's
answer as it came); `seed` fixes the hidden inputs, and a row without one gets a fresh seed
drawn here and recorded with its result.

The output holds one row per input row: the id, case id, seed, the node that ran it, whether it
came from the cache, and every field of `VerifyResult`. Rows are appended with fsync as verdicts
arrive, by this process only; a re-run with the same output skips every id already there, so an
interrupted batch resumes where it stopped and no id is ever written twice. A row that came back
`infrastructure_error` (its node failed it, not its candidate) is no verdict: a re-run takes it
out of the file and verifies it again, and says how many it retried. When every row is in, the
file is rewritten in input order.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from speedproof.cluster.jobs import Cluster, run_all
from speedproof.corpus.cache import VerificationCache, verdict_key
from speedproof.corpus.errors import CorpusError
from speedproof.corpus.jsonl import append_rows, drop_torn_tail, read_rows, write_rows
from speedproof.functions.case import Case
from speedproof.functions.verifier import VerifyResult, verifier_digest
from speedproof.functions.verify_job import VerifyJob, settle, verify_job

_NOT_JUDGED = frozenset({"infrastructure_error", "unstable"})
Task = Callable[[VerifyJob], VerifyResult]


class BatchRow(BaseModel):
    """One input row; exactly one of case/case_id and one of candidate/patch."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str | None = None
    case: Case | None = None
    case_id: str | None = None
    candidate: str | None = None
    patch: str | None = None
    seed: int | None = None

    @model_validator(mode="after")
    def _one_of_each(self) -> Self:
        if (self.case is None) == (self.case_id is None):
            raise ValueError("a row needs exactly one of case and case_id")
        if (self.candidate is None) == (self.patch is None):
            raise ValueError("a row needs exactly one of candidate and patch")
        return self


@dataclass(frozen=True)
class Settings:
    random_count: int = 64
    runs: int = 2
    corpus: Path | None = None  # where case_id rows find their case


@dataclass
class BatchReport:
    rows: int = 0
    already_done: int = 0
    # Rows a previous run left as infrastructure_error, verified again by this one.
    retried: int = 0
    cached: int = 0
    verified: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def unjudged(self) -> int:
        return sum(self.statuses[status] for status in _NOT_JUDGED)


@dataclass(frozen=True)
class _Pending:
    id: str
    job: VerifyJob
    key: str | None


def read_batch(path: Path) -> list[tuple[str, BatchRow]]:
    """The input rows with their ids; a bad row or a repeated id is an error naming its line."""
    rows: list[tuple[str, BatchRow]] = []
    seen: set[str] = set()
    for number, raw in enumerate(read_rows(path), start=1):
        try:
            row = BatchRow.model_validate(raw)
        except ValidationError as exc:
            raise CorpusError(f"{path}:{number}: {exc.errors()[0]['msg']}") from exc
        row_id = row.id or str(number)
        if row_id in seen:
            raise CorpusError(f"{path}:{number}: id {row_id!r} appears twice")
        seen.add(row_id)
        rows.append((row_id, row))
    return rows


def _cases(rows: list[tuple[str, BatchRow]], corpus: Path | None) -> dict[str, Case]:
    wanted = {row.case_id for _, row in rows if row.case_id is not None}
    if not wanted:
        return {}
    from speedproof.corpus.literals import DEFAULT_CORPUS
    from speedproof.corpus.splits import load_all

    known = {c.id: c for split in load_all(corpus or DEFAULT_CORPUS).values() for c in split}
    missing = sorted(wanted - set(known))
    if missing:
        named = ", ".join(missing[:5])
        raise CorpusError(f"{len(missing)} case ids are not in the corpus: {named}")
    return {case_id: known[case_id] for case_id in wanted}


def _job(row: BatchRow, cases: dict[str, Case], settings: Settings) -> VerifyJob:
    case = row.case if row.case is not None else cases[str(row.case_id)]
    patch = row.patch is not None
    return VerifyJob(
        case=case,
        text=str(row.patch if patch else row.candidate),
        kind="patch" if patch else "source",
        seed=secrets.randbits(62) if row.seed is None else row.seed,
        random_count=settings.random_count,
        runs=settings.runs,
    )


def _key(item: _Pending, digest: str) -> str:
    job = item.job
    return verdict_key(
        job.case,
        job.kind,
        job.text,
        job.seed,
        digest,
        random_count=job.random_count,
        runs=job.runs,
    )


def result_row(
    row_id: str, job: VerifyJob, result: VerifyResult, node: str | None
) -> dict[str, Any]:
    """One output row."""
    return {
        "id": row_id,
        "case_id": job.case.id,
        "seed": job.seed,
        "node": node,
        "cached": False,
        **result.model_dump(mode="json"),
    }


def verify_batch(
    rows_path: Path,
    out: Path,
    cluster: Cluster,
    settings: Settings | None = None,
    *,
    cache: VerificationCache | None = None,
    task: Task = verify_job,
) -> BatchReport:
    """Verify every row of `rows_path` not yet in `out` on `cluster`; see the module docstring.

    `cache` serves and records seeded rows only (an unseeded row's inputs are new each time).
    `task` is what each worker runs on a job (`verify_job`).
    """
    settings = settings or Settings()
    started = time.monotonic()
    rows = read_batch(rows_path)
    drop_torn_tail(out)
    retried = _drop_unjudged(out)
    done = {str(row["id"]) for row in read_rows(out)}
    cases = _cases([(i, r) for i, r in rows if i not in done], settings.corpus)
    digest = verifier_digest()
    ids = {row_id for row_id, _ in rows}
    report = BatchReport(rows=len(rows), already_done=len(done & ids), retried=len(retried & ids))
    todo: list[_Pending] = []
    for row_id, row in rows:
        if row_id in done:
            continue
        job = _job(row, cases, settings)
        item = _Pending(row_id, job, None)
        if cache is not None and row.seed is not None:
            item = _Pending(row_id, job, _key(item, digest))
        if not _from_cache(item, cache, out, report):
            todo.append(item)
    for finished in run_all(cluster, task, [item.job for item in todo]):
        item = todo[finished.job]
        result = settle(finished, digest, settings.runs)
        append_rows(out, [result_row(item.id, item.job, result, finished.node)])
        report.verified += 1
        report.statuses[result.status] += 1
        if cache is not None and item.key is not None and result.status not in _NOT_JUDGED:
            cache.record(item.key, item.job.case.id, result.model_dump(mode="json"))
    _in_input_order(out, [row_id for row_id, _ in rows])
    report.seconds = time.monotonic() - started
    return report


def _drop_unjudged(out: Path) -> set[str]:
    """Take the rows an infrastructure failure left out of `out` (atomically), so that they
    run again; returns their ids."""
    rows = read_rows(out)
    failed = {str(row["id"]) for row in rows if row.get("status") == "infrastructure_error"}
    if failed:
        write_rows(out, [row for row in rows if str(row["id"]) not in failed])
    return failed


def _from_cache(
    item: _Pending, cache: VerificationCache | None, out: Path, report: BatchReport
) -> bool:
    if cache is None or item.key is None:
        return False
    hit = cache.get(item.key)
    if hit is None:
        return False
    result = VerifyResult.model_validate(
        {k: v for k, v in hit.items() if k in VerifyResult.model_fields}
    )
    append_rows(out, [{**result_row(item.id, item.job, result, None), "cached": True}])
    report.cached += 1
    report.statuses[result.status] += 1
    return True


def _in_input_order(out: Path, ids: list[str]) -> None:
    """Rewrite `out` in input order, one row per id (the first one written, should there be
    two)."""
    by_id: dict[str, dict[str, Any]] = {}
    for row in read_rows(out):
        by_id.setdefault(str(row["id"]), row)
    position = {row_id: index for index, row_id in enumerate(ids)}
    ordered = sorted(by_id.values(), key=lambda r: position.get(str(r["id"]), len(ids)))
    write_rows(out, ordered)
