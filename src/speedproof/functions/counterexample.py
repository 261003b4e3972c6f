"""The smallest contract input on which a rejected candidate still differs from the reference.

For the operator only (`fn verify --counterexample`): a verdict shown to a model names the input
class and nothing more, so that hidden inputs stay hidden. Both sides run in the sandbox on each
input the shrinker tries, as in a verification; a candidate that crashes, loops or runs out of
memory on it differs.
"""

from __future__ import annotations

from speedproof.functions.case import Case, Json
from speedproof.functions.draws import contract_inputs, groups, shrink
from speedproof.functions.jobs import HarnessRun, job_document, run_harness
from speedproof.functions.sandbox import Limits, SandboxConfig
from speedproof.ground.errors import InfrastructureError


def _runs(case: Case, source: str, inputs: list[list[Json]], limits: Limits) -> HarnessRun:
    job = job_document(source, case.function_name, inputs)
    return run_harness(job, limits=limits, config=SandboxConfig())


def _differences(case: Case, source: str, inputs: list[list[Json]], limits: Limits) -> list[bool]:
    """Per input, whether the candidate's result (output, arguments after, error) differs."""
    reference = _runs(case, case.reference_source, inputs, limits)
    if reference.status != "ok" or any(item.error for item in reference.results):
        raise InfrastructureError(f"the case's reference failed: {reference.detail}")
    candidate = _runs(case, source, inputs, limits)
    if candidate.status != "ok" or len(candidate.results) != len(inputs):
        return [True] * len(inputs)
    return [
        (got.output, got.arguments, got.error) != (want.output, want.arguments, want.error)
        for want, got in zip(reference.results, candidate.results, strict=True)
    ]


def counterexample(
    case: Case, source: str, seed: int, limits: Limits | None = None
) -> list[Json] | None:
    """The shrunk first contract input of `seed` on which `source` differs, or None (no
    contract, or no contract input of this seed tells the two apart)."""
    if case.contract is None:
        return None
    chosen = limits or Limits()
    inputs = contract_inputs(case.contract, seed)
    differs = _differences(case, source, inputs, chosen)
    if not any(differs):
        return None
    first = differs.index(True)
    group = next(g for g in groups(case.contract, seed) if first < g.start + len(g.lengths))
    found = shrink(
        case.contract,
        group,
        first - group.start,
        lambda value: _differences(case, source, [value], chosen)[0],
    )
    return inputs[first] if found is None else found
