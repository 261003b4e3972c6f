"""Are a case's inputs good enough to reject wrong candidates? Mutants and traps say.

The verifier accepts a candidate that agrees with the reference on every verifier input, so a
case whose inputs cannot tell the reference from a plausible mistake is a free reward. This module
measures that on the generator side: it runs single-change mutants of the reference
(`mutants.py`) and a few generic wrong answers (`return 0`, the most common output, the reference
cut to its first K items, ...) on the case's verifier inputs and counts how many of them the
inputs reject. A mutant that no verifier input rejects is run again on a larger equivalence
sample: if that sample tells it apart it is a survivor (the inputs are weak there), otherwise it
is presumed equivalent and left out of the kill rate.

Everything run here is derived from the trusted reference; no candidate code comes near it. Still,
a mutant can loop forever or allocate without bound, so all sources run in one child process with
an address-space limit and a per-source wall budget, and the parent kills the child when it
overruns even that (a C-level loop such as `sum(range(10**15))` never lets a signal handler run).

Its parts: `adequacy_runner` (the parent), `adequacy_worker` (the child that runs the sources),
`adequacy_traps` (the generic wrong candidates); this module assesses a case with them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from speedproof.corpus.adequacy_runner import Outcomes, run_sources
from speedproof.corpus.adequacy_traps import canonical_json, generic_traps
from speedproof.corpus.mutants import mutants as make_mutants

if TYPE_CHECKING:
    # Only a type here: importing case.py would pull pydantic (~0.2 s) into every
    # process that imports this module.
    from speedproof.functions.case import Json

REFERENCE_TIMEOUT_S = 60.0
"""`assess`'s budget for the trusted reference itself: it must finish, so it gets plenty."""
MIN_MUTANT_BUDGET_S = 0.25
"""`assess` gives a mutant max(0.25 s, 10 x the reference's time on the same inputs)."""
MUTANT_BUDGET_FACTOR = 10.0


@dataclass(frozen=True)
class Adequacy:
    """How well a case's verifier inputs reject mutants and traps of its reference."""

    case_id: str
    family: str
    inputs: int
    distinct_outputs: int
    top_output_share: float
    mutants: int
    equivalent: int
    killed: int
    survivors: tuple[str, ...]
    kill_rate: float
    traps_passed: tuple[str, ...]
    hit_share: float | None


def _output_key(reference: Outcomes, index: int) -> str:
    if reference.ok(index):
        return canonical_json(reference.output(index))
    return reference.outcomes[index] if index < len(reference.outcomes) else "missing"


def _output_spread(reference: Outcomes, count: int) -> tuple[int, float]:
    """(distinct outputs, share of the inputs on which the most common output occurs)."""
    if count == 0:
        return 0, 0.0
    counts = Counter(_output_key(reference, i) for i in range(count))
    return len(counts), counts.most_common(1)[0][1] / count


def _hit_share(
    reference: Outcomes,
    inputs: Sequence[list[Json]],
    hit: Callable[[list[Json], Json], bool] | None,
) -> float | None:
    if hit is None:
        return None
    pairs = [(args, reference.output(i)) for i, args in enumerate(inputs) if reference.ok(i)]
    return sum(1 for args, out in pairs if hit(args, out)) / len(pairs) if pairs else 0.0


def _budget(reference_seconds: float, scale: float = 1.0) -> float:
    return max(MIN_MUTANT_BUDGET_S, MUTANT_BUDGET_FACTOR * reference_seconds * scale)


def _survivors_of_sample(
    reference_source: str,
    function_name: str,
    candidates: list[str],
    sample: list[list[Json]],
    budget: float,
) -> list[bool]:
    """Per candidate, whether the equivalence sample tells it from the reference."""
    if not candidates or not sample:
        return [False] * len(candidates)
    results = run_sources(
        [reference_source, *candidates],
        function_name,
        sample,
        timeout_s=budget,
        reference_timeout_s=REFERENCE_TIMEOUT_S,
    )
    return [result.differs for result in results[1:]]


def assess(
    case_id: str,
    family: str,
    reference_source: str,
    function_name: str,
    arg_names: list[str],
    verifier_inputs: list[list[Json]],
    equivalence_inputs: list[list[Json]],
    *,
    hit: Callable[[list[Json], Json], bool] | None = None,
    prefix: int = 30,
) -> Adequacy:
    """Mutants and traps of the reference against the verifier inputs (see the module doc).

    Three worker runs: the reference alone (its outputs seed the traps, its time sets every other
    source's budget: max(0.25 s, 10x)); the reference, mutants and traps on the verifier inputs;
    the reference and the mutants no verifier input rejected on the equivalence sample.
    """
    reference = run_sources(
        [reference_source], function_name, verifier_inputs, timeout_s=REFERENCE_TIMEOUT_S
    )[0]
    found = make_mutants(reference_source, function_name)
    traps = generic_traps(
        reference,
        verifier_inputs,
        function_name,
        arg_names,
        reference_source=reference_source,
        prefix=prefix,
    )
    results = run_sources(
        [reference_source, *(m.source for m in found), *(t.source for t in traps)],
        function_name,
        verifier_inputs,
        timeout_s=_budget(reference.seconds),
        reference_timeout_s=REFERENCE_TIMEOUT_S,
    )
    mutant_results, trap_results = results[1 : 1 + len(found)], results[1 + len(found) :]
    unkilled = [m for m, r in zip(found, mutant_results, strict=True) if not r.differs]
    scale = len(equivalence_inputs) / max(1, len(verifier_inputs))
    told = _survivors_of_sample(
        reference_source,
        function_name,
        [m.source for m in unkilled],
        equivalence_inputs,
        _budget(reference.seconds, max(1.0, scale)),
    )
    survivors = tuple(m.id for m, differs in zip(unkilled, told, strict=True) if differs)
    equivalent = len(unkilled) - len(survivors)
    killed = len(found) - len(unkilled)
    distinct, top_share = _output_spread(reference, len(verifier_inputs))
    return Adequacy(
        case_id=case_id,
        family=family,
        inputs=len(verifier_inputs),
        distinct_outputs=distinct,
        top_output_share=top_share,
        mutants=len(found),
        equivalent=equivalent,
        killed=killed,
        survivors=survivors,
        kill_rate=killed / (len(found) - equivalent) if len(found) > equivalent else 1.0,
        traps_passed=tuple(
            t.kind for t, r in zip(traps, trap_results, strict=True) if not r.differs
        ),
        hit_share=_hit_share(reference, verifier_inputs, hit),
    )
