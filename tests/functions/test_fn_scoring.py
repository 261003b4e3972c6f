"""Scoring traps of function mode: what the candidate adds is charged, every correct answer
outranks every wrong one, outputs are compared exactly, and no heap address reaches a value.

Every test runs the real verifier (bubblewrap, Cachegrind) on small cases whose benchmark inputs
are fixed, so each verification costs a few seconds.
"""

from __future__ import annotations

import pytest

from speedproof.corpus.prompts import canonical_patch
from speedproof.functions.case import Case, InputSpec, make_case
from speedproof.functions.jobs import job_document, run_harness
from speedproof.functions.literal_budget import MAX_LITERAL_CHARS
from speedproof.functions.reward_scale import WRONG_REWARD
from speedproof.functions.sandbox import Limits
from speedproof.functions.subset import SubsetError, check_subset
from speedproof.functions.verifier import VerifyResult, verify_candidate, verify_patch
from speedproof.reward import rewards


def _case(reference: str, edge: list[list[object]], bench: list[list[object]], hi: int) -> Case:
    spec = {"args": [{"kind": "list", "item": {"kind": "int", "lo": 1, "hi": hi}, "min_len": 0,
                      "max_len": 12}]}  # fmt: skip
    return make_case(
        id="scoring",
        family="test",
        template="test",
        reference_source=reference,
        edge_inputs=edge,  # type: ignore[arg-type]
        benchmark_inputs=bench,  # type: ignore[arg-type]
        input_spec=InputSpec.model_validate(spec),
    )


COLLATZ_REFERENCE = """def solve(xs):
    out = []
    for x in xs:
        steps = 0
        while x > 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            steps += 1
        out.append(steps)
    return out
"""


def _steps(x: int) -> int:
    steps = 0
    while x > 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


# Five benchmark inputs of 8 items from 1..4000: the calls are cheap next to compiling a table.
COLLATZ = _case(
    COLLATZ_REFERENCE,
    [[[]], [[1]], [[27, 97, 871]]],
    [[[(i * 7919 + j * 104729) % 4000 + 1 for j in range(8)]] for i in range(5)],
    4000,
)


def _table_source() -> str:
    table = ", ".join(str(_steps(x)) for x in range(4001))
    return f"def solve(xs):\n    table = ({table})\n    return [table[x] for x in xs]\n"


def _wrong(result: VerifyResult) -> None:
    assert result.status not in ("passed", "no_speedup"), result
    assert result.reward == WRONG_REWARD, result


def test_a_table_of_4001_precomputed_answers_is_refused_and_scores_the_floor() -> None:
    result = verify_candidate(COLLATZ, _table_source(), seed=1, random_count=16)
    assert result.status == "policy_error", result
    assert "literal" in result.detail
    _wrong(result)


def test_compile_time_work_is_charged_to_the_candidate() -> None:
    """Dead code that is compiled but never runs: today's calibration compiled it too."""
    dead = "".join("        steps = steps + steps\n" for _ in range(1500))
    source = COLLATZ_REFERENCE.replace(
        "    out = []\n", f"    out = []\n    steps = 0\n    if len(xs) < 0:\n{dead}"
    )
    result = verify_candidate(COLLATZ, source, seed=1, random_count=16)
    assert result.status == "no_speedup", result
    assert result.ref_ir is not None and result.cand_ir is not None
    assert result.cand_ir > result.ref_ir * 1.2, result.detail


LENGTH = _case("def solve(xs):\n    return len(xs)\n", [[[1]], [[]]], [[[3, 1, 2]]], 5)
SLOWER = "def solve(xs):\n    for i in range(3000):\n        pass\n    return len(xs)\n"


@pytest.fixture(scope="module")
def slower() -> VerifyResult:
    return verify_candidate(LENGTH, SLOWER, seed=1, random_count=8)


def test_a_correct_but_slower_answer_scores_just_below_zero(slower: VerifyResult) -> None:
    assert slower.status == "no_speedup", slower
    assert slower.reward is not None and -0.5 < slower.reward < 0.0


@pytest.mark.parametrize(
    "source",
    [
        "def solve(xs):\n    return len(xs) + 1\n",
        "def solve(xs):\n    return 1 // (len(xs) - 1)\n",
        "def solve(xs):\n    while True:\n        pass\n",
        "def solve(xs):\n    return len([0] * 10**10)\n",
        "def solve(xs):\n    import os\n    return len(xs)\n",
    ],
    ids=["other-answer", "exception", "endless-loop", "memory-bomb", "outside-the-subset"],
)
def test_every_wrong_answer_scores_the_floor_below_a_correct_slower_one(
    source: str, slower: VerifyResult
) -> None:
    result = verify_candidate(LENGTH, source, seed=1, random_count=8, limits=Limits(cpu_seconds=1))
    _wrong(result)
    assert slower.reward is not None and result.reward is not None
    assert result.reward < slower.reward


def test_a_patch_that_changes_nothing_scores_the_floor() -> None:
    patch = "<<<<<<< SEARCH\n    return len(xs)\n=======\n    return len(xs)\n>>>>>>> REPLACE\n"
    result = verify_patch(LENGTH, patch, seed=1)
    assert result.status == "patch_error", result
    assert result.reward == WRONG_REWARD


def _one_output(body: str, reference: str) -> str:
    case = _case(f"def solve(xs):\n    return {reference}\n", [[[1]], [[]]], [[[3, 1, 2]]], 5)
    return verify_candidate(case, f"def solve(xs):\n    return {body}\n", seed=1).status


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("'\\U0001F600'", "'\\ud83d\\ude00'"),  # an astral character, and its two surrogates
        ("0.0", "-0.0"),
        ("0.3", "0.1 + 0.2"),
        ("{'a': len(xs), 'b': 0}", "{'b': 0, 'a': len(xs)}"),  # key order
        ("[1, 2]", "[1.0, 2]"),
        ("[True]", "[1]"),
    ],
    ids=["surrogates", "negative-zero", "float-bits", "key-order", "int-float", "bool-int"],
)
def test_outputs_equal_in_json_but_not_in_value_are_different_answers(
    reference: str, candidate: str
) -> None:
    assert _one_output(candidate, reference) == "mismatch"


@pytest.mark.parametrize(
    "candidate",
    ["float('nan')", "(1, 2)", "{1: 2}", "{'a': float('inf')}"],
    ids=["nan", "tuple", "int-key", "infinity"],
)
def test_outputs_that_are_not_strict_json_are_candidate_errors(candidate: str) -> None:
    assert _one_output(candidate, "[1, 2]") == "candidate_error"


def test_a_heap_address_was_readable_through_the_repr_of_an_iterator() -> None:
    """What the subset now refuses: an iterator's text, which names its address."""
    source = "def solve(xs):\n    return str(map(abs, xs))\n"
    run = run_harness(job_document(source, "solve", [[[1]]]))
    assert run.status == "ok"
    assert " at 0x" in str(run.results[0].value[0])


@pytest.mark.parametrize(
    "body",
    [
        "return str(map(abs, xs))",
        "return f'{zip(xs)}'",
        "return '%s' % (filter(None, xs),)",
        "return str(solve)",
        "it = enumerate(xs)\n    return str(list(it)) + str(it)",
        "return [str(x) for x in [reversed(xs)]]",
        "return str(list(map(zip, xs, xs)))",
        "return str((x for x in xs))",
        "return len({solve, 1})",
        "return str(list({len, abs}))",
        "d = {1: 2}\n    return str(list({d.values(), 3}))",
    ],
)
def test_a_value_that_names_a_heap_address_is_outside_the_subset(body: str) -> None:
    result = verify_candidate(LENGTH, f"def solve(xs):\n    {body}\n", seed=1)
    assert result.status == "policy_error", result
    _wrong(result)


@pytest.mark.parametrize(
    "body",
    [
        "return sum(x for x in xs) + sum(map(abs, xs))",
        "return ','.join(map(str, sorted(xs, key=abs)))",
        "return [i + x for i, x in enumerate(reversed(xs))]",
        "return dict(zip(map(str, xs), xs))",
        "return [isinstance(x, (int, float)) for x in filter(None, xs)]",
        "return str.join('-', [str(x) for x in xs]) + str(3 in map(abs, xs))",
        "return len(xs) if len(xs) < 2 else solve(xs[1:]) + 1",
        "d = {x: 1 for x in xs}\n    return sum(d.values()) + max(d.values(), default=0)",
        "out: list[int] = list(zip(*zip(xs)))[0] if xs else []\n    return out",
    ],
)
def test_iterators_consumed_where_they_are_made_stay_inside_the_subset(body: str) -> None:
    check_subset(f"def solve(xs: list[int]) -> list[int]:\n    {body}\n")


def test_the_literal_budget_counts_data_but_not_the_docstring() -> None:
    doc = '    """' + "d" * 1000 + '"""\n'
    within = f"def solve(xs):\n{doc}    return '{'a' * (MAX_LITERAL_CHARS - 1)}' + str(7)\n"
    check_subset(within)
    with pytest.raises(SubsetError, match="literals total 257 characters, more than 256"):
        check_subset(within.replace("str(7)", "str(78)"))
    with pytest.raises(SubsetError, match="literals total"):
        check_subset(f"def solve(xs):\n    return xs[0] % {2**900}\n")


def test_through_the_reward_api_every_trap_scores_the_floor_below_a_correct_slower_answer() -> None:
    """The same traps as a trainer sees them: one `rewards` call, patches to the reference."""
    slower_collatz = COLLATZ_REFERENCE.replace("    out = []\n", "    out = []\n    xs = xs[:]\n")
    surrogates = _case("def solve(xs):\n    return '\\U0001F600'\n", [[[1]]], [[[3]]], 5)
    named = {
        "table": (COLLATZ, _table_source()),
        "address": (LENGTH, "def solve(xs):\n    return str(map(abs, xs))\n"),
        "surrogates": (surrogates, "def solve(xs):\n    return '\\ud83d\\ude00'\n"),
        "endless": (LENGTH, "def solve(xs):\n    while True:\n        pass\n"),
        "slower": (COLLATZ, slower_collatz),
    }
    cases = [case for case, _ in named.values()]
    patches = [canonical_patch(case.reference_source, source) for case, source in named.values()]
    values = dict(zip(named, rewards(cases, patches, seed=4), strict=True))
    slower = values.pop("slower")
    assert slower is not None and -0.5 < slower <= 0.0, slower
    assert values == dict.fromkeys(values, WRONG_REWARD)
