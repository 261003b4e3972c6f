"""The verifier end to end: real bubblewrap, real Cachegrind, the shipped example cases."""

from __future__ import annotations

import pytest

from speedproof.functions.case import Case, InputSpec, load_case, make_case
from speedproof.functions.instruction_cost import MeasureSpec, measure_many
from speedproof.functions.jobs import job_document, run_harness
from speedproof.functions.sandbox import SandboxConfig
from speedproof.functions.verifier import (
    VerifyResult,
    verifier_digest,
    verify_candidate,
    verify_patch,
)
from support.paths import ROOT

EXAMPLES = ROOT / "src/speedproof/functions/examples"


def example(name: str) -> str:
    return (EXAMPLES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def distinct() -> Case:
    return load_case(EXAMPLES / "distinct_count.case.json")


@pytest.fixture(scope="module")
def buckets() -> Case:
    return load_case(EXAMPLES / "bucket_counts.case.json")


@pytest.fixture(scope="module")
def fast_result(distinct: Case) -> VerifyResult:
    return verify_candidate(distinct, example("distinct_count_fast.py"), seed=1)


def small_case(reference: str, edge: list[list[object]]) -> Case:
    """A cheap case for failures that are decided before any measurement."""
    return make_case(
        id="small",
        family="test",
        template="test",
        reference_source=reference,
        edge_inputs=edge,  # type: ignore[arg-type]
        benchmark_inputs=[[[3, 1, 2]]],
        input_spec=InputSpec.model_validate(
            {
                "args": [
                    {
                        "kind": "list",
                        "item": {"kind": "int", "lo": 0, "hi": 5},
                        "min_len": 0,
                        "max_len": 5,
                    }
                ]
            }
        ),
    )


LENGTH = small_case("def solve(xs):\n    return len(xs)\n", [[[1]], [[]]])


def test_a_correct_faster_candidate_passes_with_a_positive_reward(
    fast_result: VerifyResult,
) -> None:
    assert fast_result.status == "passed", fast_result.detail
    assert fast_result.reward is not None and fast_result.reward > 1.0
    assert fast_result.ref_ir is not None and fast_result.cand_ir is not None
    assert fast_result.ref_ir > fast_result.cand_ir > 0
    assert fast_result.verifier_digest == verifier_digest()
    assert fast_result.inputs_checked == 6 + 64 + 5


def test_function_only_counts_undo_the_dilution_of_whole_process_counts(
    fast_result: VerifyResult,
) -> None:
    assert fast_result.reward_whole_process is not None and fast_result.reward is not None
    assert 0 < fast_result.reward_whole_process < fast_result.reward / 2
    assert fast_result.ref_ir_whole is not None and fast_result.ref_ir is not None
    assert fast_result.ref_ir_whole > fast_result.ref_ir


def test_a_correct_candidate_that_only_renames_is_no_speedup(distinct: Case) -> None:
    result = verify_candidate(distinct, example("distinct_count_renamed.py"), seed=2)
    assert result.status == "no_speedup", result.detail
    assert result.reward is not None and -0.5 < result.reward <= 0.0


def test_a_search_replace_patch_is_applied_and_verified(distinct: Case) -> None:
    result = verify_patch(distinct, example("distinct_count_fast.txt"), seed=3)
    assert result.status == "passed", result.detail


def test_the_singletons_trap_is_a_mismatch_on_the_design_note_input(distinct: Case) -> None:
    result = verify_candidate(distinct, example("distinct_count_singletons.py"))
    assert result.status == "mismatch"
    assert result.detail == "output differs on an edge input"  # [4, 4, 9] -> 2, not 1
    assert result.reward == -1.0


def test_the_dropped_local_trap_is_a_candidate_error_named_by_type_only(buckets: Case) -> None:
    result = verify_candidate(buckets, example("bucket_counts_dropped_local.py"))
    assert result.status == "candidate_error"
    assert result.detail == "NameError on an edge input"


def test_the_dropped_local_patch_is_rejected_too(buckets: Case) -> None:
    result = verify_patch(buckets, example("bucket_counts_dropped_local.txt"))
    assert result.status == "candidate_error"


def test_a_candidate_that_mutates_its_argument_is_a_mismatch() -> None:
    result = verify_candidate(LENGTH, "def solve(xs):\n    xs.sort()\n    return len(xs)\n")
    assert result.status == "mismatch"
    assert result.detail.startswith("argument 0 after the call differs on")


@pytest.mark.parametrize(
    "body",
    ["return len(xs) * 1.0", "return len(xs) == 1 or len(xs)", "return str(len(xs))"],
)
def test_outputs_are_compared_type_strictly(body: str) -> None:
    # 1, 1.0 and True are equal in Python and different answers here.
    result = verify_candidate(LENGTH, f"def solve(xs):\n    {body}\n")
    assert result.status == "mismatch"
    assert result.detail == "output differs on an edge input"


def test_a_tuple_output_is_not_json_and_a_candidate_error() -> None:
    result = verify_candidate(LENGTH, "def solve(xs):\n    return (len(xs),)\n")
    assert result.status == "candidate_error"
    assert "non-JSON output" in result.detail


def test_a_mismatch_on_random_inputs_names_only_the_class_and_index(distinct: Case) -> None:
    wrong_for_seven = (
        "def solve(xs, m):\n"
        "    if m == 7:\n"
        "        return len({x % m for x in xs}) + 1\n"
        "    return len({x % m for x in xs})\n"
    )
    result = verify_candidate(distinct, wrong_for_seven, seed=987654321)
    assert result.status == "mismatch"
    assert result.detail == "output differs on a random input"
    assert "987654321" not in result.model_dump_json()
    assert verify_candidate(distinct, wrong_for_seven, seed=987654321).detail == result.detail


@pytest.mark.parametrize(
    "source",
    [
        "def solve(xs):\n    return open('/etc/passwd').read()\n",
        "def solve(xs):\n    return __import__('os').fork()\n",
        "def solve(xs):\n    return ().__class__.__bases__[0].__subclasses__()\n",
        "def solve(xs, n=3):\n    return len(xs)\n",
    ],
)
def test_escape_attempts_are_policy_errors(source: str) -> None:
    result = verify_candidate(LENGTH, source)
    assert result.status == "policy_error"
    assert result.detail.startswith("line ")
    assert result.reward == -1.0


def test_a_huge_output_is_a_resource_limit() -> None:
    result = verify_candidate(LENGTH, "def solve(xs):\n    return 'x' * 100_000_000\n")
    assert result.status == "resource_limit", result.detail


def test_a_memory_bomb_is_a_resource_limit() -> None:
    result = verify_candidate(LENGTH, "def solve(xs):\n    return len([0] * 10**10)\n")
    assert result.status == "resource_limit", result.detail


def test_an_endless_loop_is_a_timeout() -> None:
    result = verify_candidate(LENGTH, "def solve(xs):\n    while True:\n        pass\n")
    assert result.status == "timeout", result.detail


def test_a_broken_sandbox_is_an_infrastructure_error_with_no_reward() -> None:
    result = verify_candidate(
        LENGTH, "def solve(xs):\n    return len(xs)\n", config=SandboxConfig(bwrap="/bin/false")
    )
    assert result.status == "infrastructure_error"
    assert result.reward is None and result.reward_whole_process is None


def test_a_reference_that_fails_is_an_infrastructure_error_not_the_candidates() -> None:
    broken = small_case("def solve(xs):\n    return 1 // len(xs)\n", [[[]]])
    result = verify_candidate(broken, "def solve(xs):\n    return 1\n")
    assert result.status == "infrastructure_error"
    assert result.reward is None


def test_a_patch_that_does_not_apply_is_a_patch_error(distinct: Case) -> None:
    patch = "<<<<<<< SEARCH\n    seen = {}\n=======\n    seen = set()\n>>>>>>> REPLACE\n"
    result = verify_patch(distinct, patch)
    assert result.status == "patch_error"
    assert result.detail.startswith("patch_not_found")
    assert result.reward == -1.0


@pytest.mark.slow
def test_instruction_counts_repeat_exactly_across_three_runs(distinct: Case) -> None:
    fast = example("distinct_count_fast.py")
    plain = run_harness(job_document(fast, "solve", distinct.benchmark_inputs))
    expected = [result.value for result in plain.results]
    spec = MeasureSpec(fast, "solve", distinct.benchmark_inputs, expected)
    (measurement,) = measure_many([spec], runs=3)
    assert measurement.failed is None
    assert len({run.ir for run in measurement.measured}) == 1
    assert len({run.ir for run in measurement.calibration}) == 1
    assert measurement.stable and measurement.function_ir > 0
