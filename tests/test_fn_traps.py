"""The trap suite: wrong candidates that earned rewards on corpus v1 get reward 0 on v2.

Each trap is run through the real verifier (sandbox, hidden inputs, Cachegrind) against real v2
cases. v1 rewarded them: `return 0` 7.91 on complement lookup, `return []` 7.45 on hash
membership, `[-1 for q in queries]` 6.17 on indexed lookup, answers memorised from the benchmark
inputs 6.85 and a size-band shortcut ~3.0 on distinct cardinality, normalised queries on
frequency index in 58 of 60 seeds. One case per family runs in `make test`; every dev and frozen
case in `make test-slow`.
"""

from __future__ import annotations

import json

import pytest

from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.splits import load_split
from speedproof.corpus.traps import FAST_TRAPS, TRAPS, memorised_benchmarks
from speedproof.functions.case import Case, benchmark_draws
from speedproof.functions.verify import VerifyResult, verify_candidate


def _cases(splits: tuple[str, ...], one_per_family: bool) -> list[Case]:
    chosen: list[Case] = []
    families: set[str] = set()
    for split in splits:
        for case in load_split(DEFAULT_CORPUS, split):
            if one_per_family and case.family in families:
                continue
            families.add(case.family)
            chosen.append(case)
    return chosen


def _verify(case: Case, source: str) -> VerifyResult:
    # Seed 2: the memorised table was built from seed 1's benchmark draws, as a policy that saw
    # one evaluation's inputs would build it.
    return verify_candidate(case, source, seed=2, random_count=64)


def _assert_no_reward(case: Case, kind: str) -> None:
    source = TRAPS[kind](case)
    if source is None:
        pytest.skip(f"{kind} does not apply to {case.family}")
    result = _verify(case, source)
    assert result.status != "passed", (kind, case.id, result.detail)
    assert result.reward is not None and result.reward <= 0.0, (kind, case.id, result)


FAST_CASES = _cases(("dev", "frozen_heldout"), one_per_family=True)


@pytest.mark.parametrize("case", FAST_CASES, ids=lambda c: c.family)
@pytest.mark.parametrize("kind", FAST_TRAPS)
def test_a_wrong_candidate_of_each_kind_earns_nothing_on_one_case_of_every_family(
    case: Case, kind: str
) -> None:
    _assert_no_reward(case, kind)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", _cases(("dev", "frozen_seen", "frozen_heldout"), one_per_family=False), ids=str
)
@pytest.mark.parametrize("kind", sorted(TRAPS))
def test_every_trap_earns_nothing_on_every_evaluation_case(case: Case, kind: str) -> None:
    _assert_no_reward(case, kind)


def test_memorised_benchmark_answers_are_right_on_the_draw_they_were_taken_from() -> None:
    """The memorising trap is a real one: on its own draw it answers from the table."""
    case = FAST_CASES[0]
    namespace: dict[str, object] = {}
    exec(memorised_benchmarks(case), namespace)
    reference: dict[str, object] = {}
    exec(case.reference_source, reference)
    for args in benchmark_draws(case, 1):
        want = reference["solve"](*json.loads(json.dumps(args)))  # type: ignore[operator]
        assert namespace["solve"](*json.loads(json.dumps(args))) == want  # type: ignore[operator]
    assert benchmark_draws(case, 1) != benchmark_draws(case, 2)
