"""The trap suite: wrong candidates that earned rewards on corpus v1 get reward 0 on v2.

Each trap is run through the real verifier (sandbox, hidden inputs, Cachegrind) against real v2
cases. v1 rewarded them: `return 0` 7.91 on complement lookup, `return []` 7.45 on hash
membership, `[-1 for q in queries]` 6.17 on indexed lookup, answers memorised from the benchmark
inputs 6.85 and a size-band shortcut ~3.0 on distinct cardinality, normalised queries on
frequency index in 58 of 60 seeds. One case per family runs in `make test`; every dev and frozen
case in `make test-slow`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from speedproof.cli import app
from speedproof.corpus.generate import DEFAULT_SIZES, GenerationConfig, TrustedPair, build_pairs
from speedproof.corpus.literals import DEFAULT_CORPUS
from speedproof.corpus.prompts import canonical_patch
from speedproof.corpus.splits import load_split
from speedproof.corpus.traps import FAST_TRAPS, FAST_TRAPS_BY_CLASS, TRAPS, memorised_benchmarks
from speedproof.functions.case import Case, benchmark_draws, save_case, verification_inputs
from speedproof.functions.verifier import VerifyResult, verify_candidate
from speedproof.reward import rewards


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
@pytest.mark.corpus
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


# --- fast candidates wrong only outside corpus v2's draws (a case's contract closes them) --------
#
# Each class earned a positive reward on corpus v2 (seed 2, the code before contracts; ADR 0066):
# clamped bounds 2.42 on prefix range query, garbage from 4,096 items 3.45 on distinct
# cardinality, an IndexError past 4,096 items 3.12 on complement lookup, a table over
# [-2000, 2000] 3.54 on hash membership, garbage when the first item exceeds 10^6 3.62 on running
# aggregate, dropped float items and a bug on `len(xs) % 89 == 53` on hash membership and stable
# deduplication.

PAID_ON = {
    "clamps-bounds-at-the-end": "prefix_range_query",
    "garbage-from-4096-items": "distinct_cardinality",
    "raises-past-4096-items": "complement_lookup",
    "table-for-values-within-2000": "hash_membership",
    "garbage-when-the-first-item-is-big": "running_aggregate",
    "drops-float-items": "hash_membership",
    "wrong-on-one-length-residue": "stable_dedup",
}


@functools.cache
def _trusted() -> dict[str, TrustedPair]:
    """The evaluation cases the generator draws under contracts (seed 7, the default sizes; the
    corpus's own when it was generated without a redraw), each with its known-fast source."""
    pairs = build_pairs(GenerationConfig())
    return {pair.case.id: pair for pair in pairs if pair.split != "train"}


def _evaluation_cases() -> list[Case]:
    return [pair.case for pair in _trusted().values()]


def _fast_trap(case: Case, kind: str) -> str | None:
    return FAST_TRAPS_BY_CLASS[kind](case, _trusted()[case.id].fast_source)


def _paid_case(kind: str) -> Case:
    """The first dev case of the family the class was paid on, where the class applies."""
    cases = [pair.case for pair in _trusted().values() if pair.split == "dev"]
    family = PAID_ON[kind]
    return next(c for c in cases if c.family == family and _fast_trap(c, kind) is not None)


def _one_per_family() -> list[Case]:
    firsts: dict[str, Case] = {}
    for case in _evaluation_cases():
        firsts.setdefault(case.family, case)
    return list(firsts.values())


def _assert_fast_trap_fails(case: Case, kind: str) -> None:
    source = _fast_trap(case, kind)
    if source is None:
        pytest.skip(f"{kind} does not apply to {case.id}")
    result = _verify(case, source)
    assert result.status != "passed", (kind, case.id, result.detail)
    assert result.reward is not None and result.reward <= 0.0, (kind, case.id, result)


@pytest.mark.parametrize("kind", sorted(FAST_TRAPS_BY_CLASS))
def test_a_fast_candidate_wrong_only_outside_the_old_draws_earns_nothing_where_it_was_paid(
    kind: str,
) -> None:
    _assert_fast_trap_fails(_paid_case(kind), kind)


def test_the_known_fast_source_itself_still_passes_where_the_traps_were_paid() -> None:
    """The traps fail on their defect, not on the fast source they are built from."""
    case = _paid_case("clamps-bounds-at-the-end")
    result = _verify(case, _trusted()[case.id].fast_source)
    assert result.status == "passed" and result.reward is not None and result.reward > 0


def test_fn_verify_rejects_a_candidate_wrong_only_below_zero(tmp_path: Path) -> None:
    case = _paid_case("clamps-bounds-at-the-end")
    source = _fast_trap(case, "clamps-bounds-at-the-end")
    assert source is not None
    save_case(case, tmp_path / "case.json")
    (tmp_path / "candidate.py").write_text(source, encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["fn", "verify", str(tmp_path / "case.json"), str(tmp_path / "candidate.py"), "--json"],
    )
    verdict = json.loads(result.output)
    # A bound below -len(xs) makes `prefix[lo]` raise; one above it reads the wrong sum.
    assert verdict["status"] in ("mismatch", "candidate_error"), result.output
    assert verdict["reward"] <= 0.0 and result.exit_code == 1


EVALUATION_SIZE = sum(size for split, size in DEFAULT_SIZES.items() if split != "train")


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("number", range(EVALUATION_SIZE))
@pytest.mark.parametrize("kind", sorted(FAST_TRAPS_BY_CLASS))
def test_every_fast_trap_earns_nothing_on_every_evaluation_case(kind: str, number: int) -> None:
    _assert_fast_trap_fails(_evaluation_cases()[number], kind)


@pytest.mark.slow
def test_every_fast_trap_earns_nothing_through_the_reward_api() -> None:
    """Every class on one case of every family, in one `rewards` call (wrong answers: -1.0)."""
    chosen: list[tuple[Case, str]] = []
    for case in _one_per_family():
        for kind in sorted(FAST_TRAPS_BY_CLASS):
            source = _fast_trap(case, kind)
            if source is not None:
                chosen.append((case, canonical_patch(case.reference_source, source)))
    values = rewards([c for c, _ in chosen], [p for _, p in chosen], seed=2)
    assert all(v is not None and v <= 0.0 for v in values), values


def _run(source: str, args: list[Any]) -> str:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # trusted: the corpus reference and a trap built here
    return json.dumps(namespace["solve"](*json.loads(json.dumps(args))))


@pytest.mark.slow
def test_a_bug_on_one_residue_of_the_length_is_caught_on_all_of_100_seeds() -> None:
    """v2's draws met `len(xs) % 89 == 53` on 24-46 of 100 seeds; the sweep meets it on each."""
    case = _paid_case("wrong-on-one-length-residue")
    trap = _fast_trap(case, "wrong-on-one-length-residue")
    assert trap is not None
    caught = 0
    for seed in range(100):
        inputs = verification_inputs(case, seed, 64).values
        caught += any(_run(trap, a) != _run(case.reference_source, a) for a in inputs)
    assert caught >= 99
