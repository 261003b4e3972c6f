"""Mutant and trap runs in a limited worker, and what they say about a case's inputs."""

from __future__ import annotations

import ast
import json
from functools import cache

import pytest

from speedproof.corpus.adequacy import Adequacy, assess
from speedproof.corpus.adequacy_runner import Outcomes, run_sources
from speedproof.corpus.adequacy_traps import Trap, generic_traps
from speedproof.functions.case import Case, Json, generate_inputs
from support.paths import ROOT

DEV = ROOT / "corpus" / "v1" / "dev.jsonl"
LENGTH = "def solve(xs):\n    return len(xs)\n"
INPUTS: list[list[Json]] = [[[]], [[1, 2]], [[3]]]


@cache
def _dev() -> dict[str, Case]:
    cases = [Case.model_validate(json.loads(line)) for line in DEV.read_text().splitlines()]
    return {case.id: case for case in cases}


def _arg_names(case: Case) -> list[str]:
    function = ast.parse(case.reference_source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return [arg.arg for arg in function.args.args]


def _equivalence_sample(case: Case, count: int = 400) -> list[list[Json]]:
    sample: list[list[Json]] = []
    seed = 2
    while len(sample) < count:
        sample += generate_inputs(case.input_spec, seed, 64)
        seed += 1
    return sample[:count]


def _assess_dev(case_id: str) -> tuple[Case, Adequacy]:
    case = _dev()[case_id]
    verifier = case.edge_inputs + generate_inputs(case.input_spec, 1, 64) + case.benchmark_inputs
    result = assess(
        case.id,
        case.family,
        case.reference_source,
        case.function_name,
        _arg_names(case),
        verifier,
        _equivalence_sample(case),
        hit=lambda args, output: output != 0,
    )
    return case, result


def _against_length(*sources: str, timeout_s: float = 0.3) -> list[Outcomes]:
    return run_sources([LENGTH, *sources], "solve", INPUTS, timeout_s=timeout_s)[1:]


# --- the worker ---------------------------------------------------------------------------------


def test_the_reference_outcome_is_canonical_json_of_output_and_arguments_after_the_call() -> None:
    (reference,) = run_sources([LENGTH], "solve", INPUTS)
    assert reference.outcomes == ("[0,[[]]]", "[2,[[1,2]]]", "[1,[[3]]]")
    assert reference.first_difference is None and not reference.differs
    assert [reference.output(i) for i in range(3)] == [0, 2, 1]


def test_a_source_agreeing_everywhere_does_not_differ() -> None:
    (same,) = _against_length(
        "def solve(ys):\n    n = 0\n    for _ in ys:\n        n += 1\n    return n\n"
    )
    assert not same.differs
    assert len(same.outcomes) == len(INPUTS)


@pytest.mark.timeout(60)  # a hang fails here instead of stalling the suite
def test_an_infinite_while_loop_comes_back_as_a_timeout_without_hanging() -> None:
    (looping,) = _against_length("def solve(xs):\n    i = 0\n    while i < 1:\n        pass\n")
    assert looping.outcomes == ("timeout",)
    assert looping.first_difference == 0


@pytest.mark.timeout(60)  # sum(range(10**15)) alone would run for days
def test_a_loop_inside_c_code_is_ended_by_the_parent_and_the_next_source_still_runs() -> None:
    stuck, after = _against_length("def solve(xs):\n    return sum(range(10**15))\n", LENGTH)
    assert stuck.outcomes == ("timeout",)
    assert not after.differs and len(after.outcomes) == len(INPUTS)


def test_a_memory_bomb_comes_back_as_a_memory_error() -> None:
    bomb, doubling = _against_length(
        "def solve(xs):\n    return [0] * (10**10)\n",
        "def solve(xs):\n    t = [0]\n    while True:\n        t = t + t\n",
        timeout_s=5.0,
    )
    assert bomb.outcomes == ("error:MemoryError",)
    assert doubling.outcomes == ("error:MemoryError",)  # 2**27 items of 8 bytes pass 1 GiB


def test_a_float_output_differs_from_the_equal_int_output() -> None:
    (floats,) = _against_length("def solve(xs):\n    return float(len(xs))\n")
    assert floats.outcomes == ("[0.0,[[]]]",)
    assert floats.first_difference == 0


def test_true_differs_from_one() -> None:
    ones, trues = run_sources(
        ["def solve(x):\n    return 1\n", "def solve(x):\n    return True\n"], "solve", [[0]]
    )
    assert trues.differs and trues.outcomes == ("[true,[0]]",)
    assert ones.outcomes == ("[1,[0]]",)


def test_a_mutated_argument_is_seen_even_when_the_output_is_right() -> None:
    (mutating,) = _against_length(
        "def solve(xs):\n    n = len(xs)\n    xs.append(0)\n    return n\n"
    )
    assert mutating.outcomes == ("[0,[[0]]]",)
    assert mutating.differs


def test_each_call_gets_a_fresh_copy_of_its_arguments() -> None:
    source = "def solve(xs):\n    xs.append(0)\n    return len(xs)\n"
    (appending,) = run_sources([source], "solve", [[[1]], [[1]]])
    assert appending.outcomes == ("[2,[[1,0]]]", "[2,[[1,0]]]")


def test_non_json_values_are_error_outcomes_named_by_type() -> None:
    found = _against_length(
        "def solve(xs):\n    return (1, 2)\n",
        "def solve(xs):\n    return {1}\n",
        "def solve(xs):\n    return {1: 2}\n",
        "def solve(xs):\n    return float('nan')\n",
    )
    assert [f.outcomes for f in found] == [
        ("error:tuple",),
        ("error:set",),
        ("error:dict",),
        ("error:float",),
    ]


def test_an_exception_is_an_error_outcome_and_so_is_unparsable_source() -> None:
    raising, broken = _against_length("def solve(xs):\n    return xs[5]\n", "def solve(xs) return")
    assert raising.outcomes == ("error:IndexError",)
    assert broken.outcomes == ("error:SyntaxError",)


def test_a_worker_that_dies_mid_source_is_replaced_for_the_remaining_sources() -> None:
    dying, after = _against_length(
        "def solve(xs):\n    import os\n    os._exit(3)\n", "def solve(xs):\n    return 7\n"
    )
    assert dying.outcomes == ("error:WorkerCrash",)
    assert after.outcomes == ("[7,[[]]]",)


def test_printing_does_not_corrupt_the_report_channel() -> None:
    (printing,) = _against_length("def solve(xs):\n    print('[1, 2]')\n    return len(xs)\n")
    assert not printing.differs


def test_a_printing_loop_ends_as_an_error_once_its_stderr_file_is_full() -> None:
    (flooding,) = _against_length(
        "def solve(xs):\n    while True:\n        print('x' * 65536)\n", timeout_s=5.0
    )
    assert flooding.outcomes == ("error:OSError",)  # EFBIG past 16 MiB, well before 5 s


def test_a_source_stops_at_its_first_difference_unless_asked_to_go_on() -> None:
    wrong_later = "def solve(xs):\n    return len(xs) if len(xs) != 2 else 9\n"
    (stopped,) = run_sources([LENGTH, wrong_later], "solve", INPUTS)[1:]
    (went_on,) = run_sources(
        [LENGTH, wrong_later], "solve", INPUTS, stop_at_first_difference=False
    )[1:]
    assert stopped.outcomes == ("[0,[[]]]", "[9,[[1,2]]]")
    assert went_on.outcomes == ("[0,[[]]]", "[9,[[1,2]]]", "[1,[[3]]]")
    assert stopped.first_difference == went_on.first_difference == 1


def test_the_reference_may_sit_anywhere_in_the_list_of_sources() -> None:
    first, second = run_sources(
        ["def solve(xs):\n    return 0\n", LENGTH], "solve", INPUTS, reference_index=1
    )
    assert second.first_difference is None and len(second.outcomes) == len(INPUTS)
    assert first.first_difference == 1


# --- traps --------------------------------------------------------------------------------------


def _traps(reference: str, inputs: list[list[Json]], names: list[str]) -> list[Trap]:
    (outcomes,) = run_sources([reference], "solve", inputs)
    return generic_traps(outcomes, inputs, "solve", names, reference_source=reference, prefix=2)


def _by_kind(traps: list[Trap]) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for trap in traps:
        kinds.setdefault(trap.kind, []).append(trap.source.splitlines()[-1].strip())
    return kinds


def test_generic_traps_return_the_common_output_constants_and_arguments() -> None:
    reference = "def solve(xs, queries):\n    return [q in xs for q in queries]\n"
    inputs: list[list[Json]] = [[[1, 2, 3], [5, 6]], [[4], [7, 4]], [[], [1]]]
    traps = _traps(reference, inputs, ["xs", "queries"])
    assert traps[0] == Trap(
        "most-common-output", "def solve(xs, queries):\n    return [False, False]"
    )
    assert _by_kind(traps) == {
        "most-common-output": ["return [False, False]"],
        "return-0": ["return 0"],
        "return-empty-list": ["return []"],
        "return-none": ["return None"],
        "first-argument": ["return xs"],
        "identity": ["return [xs, queries]"],
        # False is the most common item of the list outputs; one trap per list argument.
        "constant-per-item": ["return [False for _ in xs]", "return [False for _ in queries]"],
        "truncated-prefix": ["return [q in xs for q in queries]"],
    }
    assert traps[-1].source == (
        "def solve(xs, queries):\n    xs = xs[:2]\n    return [q in xs for q in queries]"
    )


def test_the_truncated_prefix_trap_needs_the_reference_source() -> None:
    reference = "def solve(xs):\n    return xs[::-1]\n"
    (outcomes,) = run_sources([reference], "solve", [[[1, 2]]])
    kinds = {trap.kind for trap in generic_traps(outcomes, [[[1, 2]]], "solve", ["xs"])}
    assert "truncated-prefix" not in kinds and "constant-per-item" in kinds


def test_a_one_argument_function_gets_no_identity_trap_and_no_per_item_trap_for_an_int() -> None:
    traps = _by_kind(_traps("def solve(xs):\n    return sum(xs)\n", [[[1, 2]], [[3]]], ["xs"]))
    assert "identity" not in traps and "constant-per-item" not in traps
    assert traps["most-common-output"] == ["return 3"]


def test_a_trap_identical_to_the_reference_is_left_out() -> None:
    traps = _by_kind(_traps("def solve(xs):\n    return 0\n", [[[1]], [[2]]], ["xs"]))
    assert "return-0" not in traps and "most-common-output" not in traps
    assert "return-none" in traps


# --- assessment ---------------------------------------------------------------------------------


def test_a_reference_that_always_returns_zero_is_passed_by_the_return_0_trap() -> None:
    # width 21 over values in [-3000, 3000] gives keys of at most 142: no pair reaches 480.
    case, result = _assess_dev("complement_lookup.index_while.5520f917287d")
    assert "target = 480" in case.reference_source
    assert result.distinct_outputs == 1 and result.top_output_share == 1.0
    assert {"return-0", "most-common-output"} <= set(result.traps_passed)
    assert result.hit_share == 0.0
    assert result.equivalent > result.mutants // 3  # mutants of a constant function rarely show


@pytest.mark.parametrize(
    "case_id",
    ["distinct_cardinality.pop_while.e03c28ca9014", "prefix_range_query.pair_while.829c5edc7802"],
)
def test_a_good_reference_with_adequate_inputs_kills_nearly_every_mutant(case_id: str) -> None:
    _, result = _assess_dev(case_id)
    assert result.mutants >= 20 and result.inputs >= 73
    assert result.kill_rate >= 0.95
    assert result.survivors == ()
    assert result.traps_passed == ()
    assert result.distinct_outputs > 10 and result.top_output_share < 0.5


def test_queries_that_never_hit_let_an_all_false_answer_through() -> None:
    # xs[j] * 19 + 526 almost never equals a drawn query: the answer is nearly always all False.
    _, result = _assess_dev("hash_membership.index_while.61ba1488a970")
    assert "constant-per-item" in result.traps_passed
    assert result.kill_rate < 0.9 and len(result.survivors) >= 5


def test_a_branch_the_inputs_never_reach_leaves_survivors() -> None:
    reference = (
        "def solve(xs):\n"
        "    total = 0\n"
        "    for x in xs:\n"
        "        if x > 1000:\n"
        "            total += x * 2\n"
        "        else:\n"
        "            total += 1\n"
        "    return total\n"
    )
    small: list[list[Json]] = [[[]], [[1, 2, 3]], [[100, 5]], [[7] * 9]]
    large: list[list[Json]] = [[[x, 2000 + x]] for x in range(40)]
    result = assess("branch", "synthetic", reference, "solve", ["xs"], small, large)
    assert "arith-swap@5:0" in result.survivors  # `total -= x * 2`
    assert "statement-drop@5:0" in result.survivors
    assert result.kill_rate < 0.9
    assert result.killed + result.equivalent + len(result.survivors) == result.mutants
    assert result.hit_share is None
