"""One verification as a job of the execution layer: what a worker gets and what comes back.

The seed is always fixed by the driver before the job leaves it, so a job that runs again after
its worker died draws the same hidden inputs and reaches the same verdict. The driver checks
that the worker's verifier is its own (`verifier_digest`): a worker with other verifier sources
would put verdicts under cache keys that do not describe them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from speedproof.cluster.jobs import Finished
from speedproof.functions.case import Case
from speedproof.functions.verifier import VerifyResult, verify_candidate, verify_patch

Kind = Literal["source", "patch"]


class VerifyJob(BaseModel):
    """A candidate (whole function source, or a patch or model answer) against a case."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    case: Case
    text: str
    kind: Kind
    seed: int
    random_count: int = 64
    runs: int = 2


def verify_job(job: VerifyJob) -> VerifyResult:
    """The task a worker runs: `verify_candidate` or `verify_patch`."""
    verify = verify_candidate if job.kind == "source" else verify_patch
    return verify(job.case, job.text, seed=job.seed, random_count=job.random_count, runs=job.runs)


def unjudged(detail: str, digest: str, runs: int) -> VerifyResult:
    """The verdict of a job that produced none: an infrastructure error, no reward."""
    return VerifyResult(
        status="infrastructure_error",
        reward=None,
        runs=max(2, runs),
        detail=detail,
        duration_s=0.0,
        verifier_digest=digest,
    )


def settle(finished: Finished[VerifyResult], digest: str, runs: int) -> VerifyResult:
    """The verdict the driver records for a finished job."""
    result = finished.value
    if result is None:
        return unjudged(f"the job did not finish: {finished.error}", digest, runs)
    if result.verifier_digest != digest:
        return unjudged(
            f"worker {finished.node} runs verifier {result.verifier_digest[:12]}, "
            f"not this driver's {digest[:12]}",
            digest,
            runs,
        )
    return result
