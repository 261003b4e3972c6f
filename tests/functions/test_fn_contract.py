"""A case's contract: drawn over in full and at its boundaries, the same for the same seed, shown
to the model, and the same for every template of a family."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from speedproof.corpus.families import BY_NAME
from speedproof.corpus.families.base import MAX_ITEMS
from speedproof.corpus.generate import TrustedPair, _render
from speedproof.corpus.prompts import build_messages
from speedproof.functions.case import Case, load_case, model_view, save_case, verification_inputs
from speedproof.functions.contract import (
    SWEEP,
    Contract,
    IntArg,
    ListArg,
    describe,
    input_violation,
)
from speedproof.functions.draws import contract_inputs, plan


def _pair(family: str, template: int = 0, index: int = 0) -> TrustedPair:
    chosen = BY_NAME[family]
    knob_template = chosen.templates[template]
    rng = random.Random(f"contract:{family}:{template}:{index}")
    return _render(chosen, knob_template, knob_template.role, rng, index)


def _case(family: str, template: int = 0, index: int = 0) -> Case:
    return _pair(family, template, index).case


def _load(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # trusted generator output
    return namespace["solve"]


def _fresh(args: list[Any]) -> list[Any]:
    copied: list[Any] = json.loads(json.dumps(args))
    return copied


def test_the_same_seed_draws_the_same_contract_inputs_and_another_seed_other_ones() -> None:
    contract = _case("hash_membership").contract
    assert contract is not None
    first = contract_inputs(contract, 5)
    assert contract_inputs(contract, 5) == first
    assert contract_inputs(contract, 6) != first


def test_every_drawn_input_keeps_the_contract_and_every_length_up_to_the_sweep_is_drawn() -> None:
    case = _case("prefix_range_query")
    assert case.contract is not None
    drawn = contract_inputs(case.contract, 1)
    assert [input_violation(case.contract, args) for args in drawn] == [None] * len(drawn)
    lengths = [len(args[0]) for args in drawn]
    assert set(range(SWEEP + 1)) <= set(lengths)
    assert MAX_ITEMS in lengths and lengths == plan(case.contract)


def test_every_residue_of_every_modulus_up_to_101_is_a_drawn_length() -> None:
    contract = _case("stable_dedup").contract
    assert contract is not None
    lengths = plan(contract)
    for modulus in range(1, SWEEP + 2):
        assert {n % modulus for n in lengths} == set(range(modulus)), modulus


def test_the_draws_reach_the_boundaries_of_the_contract() -> None:
    """Negative and huge values, extremes first and last, duplicates, reversed query bounds."""
    case = _case("prefix_range_query")
    assert case.contract is not None
    drawn = contract_inputs(case.contract, 3)
    items = [x for args in drawn for x in args[0]]
    bounds = [b for args in drawn for pair in args[1] for b in pair]
    assert min(items) == -(10**18) and max(items) == 10**18
    assert any(args[0] and args[0][0] > 10**6 for args in drawn)
    assert any(args[0] and args[0][-1] < -(10**6) for args in drawn)
    assert any(len(set(args[0])) < len(args[0]) for args in drawn)
    assert min(bounds) < -(10**6) and max(bounds) > 10**6
    assert any(-10 < b < 0 for b in bounds)
    assert any(lo > hi for args in drawn for lo, hi in args[1])


def test_floats_are_drawn_only_where_the_contract_allows_them() -> None:
    with_floats = _case("hash_membership", index=0)  # the `mod` prelude: defined on floats
    without = _case("hash_membership", index=3)  # `xor`: not defined on floats
    assert "^" in without.reference_source
    for case, floats in ((with_floats, True), (without, False)):
        assert case.contract is not None
        drawn = contract_inputs(case.contract, 2)
        found = any(isinstance(x, float) for args in drawn for x in args[0])
        assert found is floats, case.reference_source


def test_the_model_is_shown_the_contract_in_words() -> None:
    case = _case("prefix_range_query")
    view = model_view(case)
    assert view.contract is not None and "4096 items" in view.contract
    assert "lo > hi" in view.contract and "negative bounds" in view.contract
    user = build_messages(view)[1].content
    assert view.contract in user and "all of it is checked" in user


def test_a_contract_states_every_argument_in_plain_words() -> None:
    contract = Contract(
        names=["xs"],
        args=[
            ListArg(
                kind="list",
                item=IntArg(kind="int", lo=-5, hi=5, floats=True, float_lo=-1.0, float_hi=1.0),
                min_len=0,
                max_len=9,
            )
        ],
    )
    assert describe(contract) == (
        "- `xs`: a list of 0 to 9 items, each an int from -5 to 5, or a float from -1 to 1"
    )


def test_an_input_outside_the_contract_is_named() -> None:
    contract = _case("prefix_range_query").contract
    assert contract is not None
    assert input_violation(contract, [[1, 2], [[0, 1]]]) is None
    assert input_violation(contract, [[1, 2.5], []]) == "`xs`: float where an int is required"
    assert input_violation(contract, [[1], [[0, 1, 2]]]) == (
        "`queries`: 3 items where exactly 2 are required"
    )
    assert input_violation(contract, [[True], []]) == "`xs`: bool where an int is required"


def test_a_case_whose_fixed_input_breaks_its_contract_is_refused() -> None:
    case = _case("distinct_cardinality")
    with pytest.raises(ValueError, match="a fixed input breaks its contract"):
        Case.model_validate({**case.model_dump(), "edge_inputs": [[[10**19]]]})


def test_a_case_with_a_contract_survives_a_round_trip_through_its_file(tmp_path: Any) -> None:
    case = _case("frequency_index")
    save_case(case, tmp_path / "case.json")
    assert load_case(tmp_path / "case.json") == case


def test_a_verification_draws_the_contract_inputs_between_random_and_benchmark_ones() -> None:
    case = _case("running_aggregate")
    assert case.contract is not None
    drawn = verification_inputs(case, 4, 8)
    classes = drawn.classes
    assert classes.count("contract") == len(plan(case.contract))
    assert classes.index("contract") > classes.index("random")
    assert classes.index("benchmark") > max(i for i, c in enumerate(classes) if c == "contract")


def test_every_prefix_template_gives_the_same_answers_on_negative_and_reversed_bounds() -> None:
    """In corpus v2 the five templates disagreed below 0; now they are one specification."""
    family = BY_NAME["prefix_range_query"]
    rng = random.Random(0)
    knobs = family.knobs(rng, "train", 0)
    solvers = [_load(template.slow(knobs)) for template in family.templates]
    fast = _load(family.templates[0].fast(knobs))
    xs = [5, -3, 8, 13, 2]
    queries = [[-3, 2], [-9, -1], [3, 1], [2, 99], [-(10**18), 10**18], [0, 5]]
    answers = [solve(_fresh([xs, queries])[0], queries) for solve in [*solvers, fast]]
    assert all(answer == answers[0] for answer in answers)
    key = knobs.prelude.key_function()
    assert answers[0][0] == key(5) + key(-3) and answers[0][1] == 0 and answers[0][2] == 0


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(BY_NAME))
def test_every_known_fast_source_agrees_with_its_reference_on_the_whole_contract(
    family: str,
) -> None:
    """Every template, one case each, on one seed's contract inputs (about 30 s a family)."""
    for template in range(len(BY_NAME[family].templates)):
        pair = _pair(family, template)
        assert pair.case.contract is not None
        slow, fast = _load(pair.case.reference_source), _load(pair.fast_source)
        for args in contract_inputs(pair.case.contract, 9):
            got, want = fast(*_fresh(args)), slow(*_fresh(args))
            assert json.dumps(got) == json.dumps(want), (pair.case.id, str(args)[:200])


@pytest.mark.slow
def test_a_rejection_names_the_smallest_contract_input_that_still_fails() -> None:
    """Hypothesis shrinks the failing draw: the length that triggers the bug stays, the values
    go to 0 (the first and last items are the extremes this draw placed there)."""
    from speedproof.functions.counterexample import counterexample

    pair = _pair("running_aggregate")
    body = pair.fast_source.splitlines()
    trap = "\n".join([body[0], "    if len(xs) % 89 == 53:", "        return None", *body[1:]])
    found = counterexample(pair.case, trap + "\n", seed=4)
    assert found is not None and len(found[0]) == 53
    assert found[0][1:-1] == [0] * 51
    assert counterexample(pair.case, pair.fast_source, seed=4) is None
