"""Shared helpers of the execution-layer and reward tests (no tests here).

Cases come from the real corpus (corpus/v2). Their known-fast sources are rendered again from
the generation seed: v2 was generated with seed 7 and no draft redrawn, so `build_pairs` of the
default configuration gives exactly its cases, each with its fast source.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speedproof.corpus.generate import GenerationConfig, TrustedPair, build_pairs
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.prompts import canonical_patch
from speedproof.corpus.splits import load_split
from speedproof.functions.case import Case
from speedproof.functions.verifier import VerifyResult
from speedproof.functions.verify_job import VerifyJob, verify_job
from speedproof.ground.errors import InfrastructureError
from support.corpus import padded, wrong_constant

INVALID = (
    "<<<<<<< SEARCH\n    this line is not in the function\n=======\n    pass\n>>>>>>> REPLACE\n"
)
NO_PATCH = "Put the values in a set first, then look each query up."


@functools.cache
def v2_pairs() -> dict[str, TrustedPair]:
    return {pair.case.id: pair for pair in build_pairs(GenerationConfig())}


def dev_cases() -> list[Case]:
    """The dev split of corpus/v2, one case of each family first."""
    cases = load_split(DEFAULT_CORPUS, "dev")
    firsts: dict[str, Case] = {}
    for case in cases:
        firsts.setdefault(case.family, case)
    rest = [case for case in cases if firsts[case.family] is not case]
    return [*firsts.values(), *rest]


def fast_patch(case: Case) -> str:
    """The known-fast source as a model would answer: one SEARCH/REPLACE block."""
    return canonical_patch(case.reference_source, v2_pairs()[case.id].fast_source)


def wrong_patch(case: Case) -> str:
    """A patch to the fast source with its prelude constant off by one: other answers."""
    return canonical_patch(case.reference_source, wrong_constant(v2_pairs()[case.id].fast_source))


def slower_patch(case: Case) -> str:
    """The reference with one more statement: correct and not faster."""
    return canonical_patch(case.reference_source, padded(case.reference_source))


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def cheap_rows(seed: int = 4) -> list[dict[str, Any]]:
    """Rows decided before any Cachegrind run: a wrong answer (two sandbox runs), a candidate
    outside the subset, a patch that does not apply, an answer with no patch."""
    cases = dev_cases()
    return [
        {"id": "wrong-0", "case_id": cases[0].id, "patch": wrong_patch(cases[0]), "seed": seed},
        {"id": "wrong-1", "case_id": cases[1].id, "patch": wrong_patch(cases[1]), "seed": seed},
        {
            "id": "outside",
            "case_id": cases[2].id,
            "candidate": "def solve(xs):\n    import os\n    return 0\n",
            "seed": seed,
        },
        {"id": "invalid", "case_id": cases[3].id, "patch": INVALID, "seed": seed},
        {"id": "no-patch", "case_id": cases[4].id, "patch": NO_PATCH, "seed": seed},
    ]


CHEAP_STATUSES = {
    "wrong-0": "mismatch",
    "wrong-1": "mismatch",
    "outside": "policy_error",
    "invalid": "patch_error",
    "no-patch": "patch_error",
}


def job_digest(job: VerifyJob) -> str:
    return hashlib.sha256(f"{job.case.id}\0{job.text}".encode()).hexdigest()


@dataclass(frozen=True)
class DieOnce:
    """A task that kills its own worker process (SIGKILL, as the kernel's OOM killer would) on
    the first job it is given, then verifies normally. The marker file says which job died;
    creating it with O_EXCL makes exactly one job, on whichever worker or node, the victim."""

    marker: str

    def __call__(self, job: VerifyJob) -> VerifyResult:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return verify_job(job)
        os.write(fd, job_digest(job).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable: the worker is dead")


def killed_row_id(marker: Path, rows: list[dict[str, Any]]) -> str:
    """The id of the row whose job the marker names."""
    victim = marker.read_text()
    cases = {case.id: case for case in load_split(DEFAULT_CORPUS, "dev")}
    for row in rows:
        text = row.get("patch") or row.get("candidate")
        digest = hashlib.sha256(f"{cases[row['case_id']].id}\0{text}".encode()).hexdigest()
        if digest == victim:
            return str(row["id"])
    raise AssertionError("the marker names no row")


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A result row without what may differ between equal verdicts: time and place."""
    return {k: v for k, v in row.items() if k not in ("duration_s", "node")}


@dataclass(frozen=True)
class Marks:
    """A job that appends `start NAME` to a shared file, waits up to `wait_s` for a second job
    to start, then appends `end NAME`. Two such jobs overlapped exactly when both starts come
    before either end; if they cannot overlap, the first waits out its time alone."""

    path: str
    wait_s: float = 1.5

    def __call__(self, name: str) -> str:
        self._append(f"start {name}")
        deadline = time.monotonic() + self.wait_s
        while time.monotonic() < deadline and self._starts() < 2:
            time.sleep(0.02)
        self._append(f"end {name}")
        return name

    def _append(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def _starts(self) -> int:
        with open(self.path, encoding="utf-8") as handle:
            return sum(line.startswith("start") for line in handle)


def marks(path: Path) -> list[str]:
    """The kinds of the marks in `path`, in order: "start" and "end"."""
    return [line.split()[0] for line in path.read_text(encoding="utf-8").splitlines()]


def fails_for_the_node(job: VerifyJob) -> VerifyResult:
    """A task that fails as a node without valgrind does: for the infrastructure, no verdict."""
    raise InfrastructureError(f"valgrind is not installed on this node (case {job.case.id})")


@dataclass(frozen=True)
class DiesOn:
    """A task that kills its worker (SIGKILL) whenever it runs on the node named `node` (the
    session cluster's SPEEDPROOF_TEST_NODE), as on a node that cannot run the job; elsewhere it
    returns that node's name."""

    node: str

    def __call__(self, payload: object) -> str:
        here = os.environ.get("SPEEDPROOF_TEST_NODE", "?")
        if here == self.node:
            os.kill(os.getpid(), signal.SIGKILL)
        return here
