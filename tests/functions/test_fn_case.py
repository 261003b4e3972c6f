"""Function-mode cases: the schema, deterministic random inputs, the AST hash, the model view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from speedproof.functions.case import (
    Case,
    InputSpec,
    ast_hash,
    benchmark_draws,
    generate_inputs,
    load_case,
    make_case,
    model_view,
    save_case,
    verification_inputs,
)
from support.paths import ROOT

EXAMPLES = ROOT / "src/speedproof/functions/examples"

REFERENCE = '''def solve(xs, m):
    """Distinct residues."""
    seen = []
    for x in xs:
        r = x % m
        if r not in seen:
            seen.append(r)
    return len(seen)
'''

SPEC = InputSpec.model_validate(
    {
        "args": [
            {
                "kind": "list",
                "item": {"kind": "int", "lo": -5, "hi": 5},
                "min_len": 0,
                "max_len": 6,
            },
            {"kind": "int", "lo": 1, "hi": 9},
            {
                "kind": "tuple",
                "items": [
                    {"kind": "str", "alphabet": "xyz", "min_len": 1, "max_len": 3},
                    {"kind": "choice", "values": [None, 1.5, {"k": [1]}]},
                ],
            },
        ]
    }
)


def _case(**overrides: object) -> Case:
    fields: dict[str, object] = {
        "id": "c1",
        "family": "distinct_cardinality",
        "template": "t1",
        "reference_source": REFERENCE,
        "edge_inputs": [[[], 1, ["x", None]]],
        "benchmark_inputs": [[[1, 2], 3, ["y", 1.5]]],
        "input_spec": SPEC,
    }
    fields.update(overrides)
    return make_case(**fields)  # type: ignore[arg-type]


def test_random_inputs_are_the_same_for_the_same_seed_and_differ_for_another() -> None:
    first = generate_inputs(SPEC, 7, 20)
    assert first == generate_inputs(SPEC, 7, 20)
    assert first != generate_inputs(SPEC, 8, 20)


def test_random_inputs_follow_their_spec() -> None:
    for xs, m, pair in generate_inputs(SPEC, 1, 200):
        assert isinstance(xs, list) and all(-5 <= x <= 5 for x in xs) and len(xs) <= 6
        assert isinstance(m, int) and 1 <= m <= 9
        assert isinstance(pair, list) and len(pair) == 2
        assert set(pair[0]) <= set("xyz") and pair[1] in (None, 1.5, {"k": [1]})


def test_a_spec_with_an_unknown_kind_or_key_is_rejected() -> None:
    with pytest.raises(ValidationError):
        InputSpec.model_validate({"args": [{"kind": "float", "lo": 0, "hi": 1}]})
    with pytest.raises(ValidationError):
        InputSpec.model_validate({"args": [{"kind": "int", "lo": 0, "hi": 1, "step": 2}]})
    with pytest.raises(ValidationError):
        InputSpec.model_validate({"args": [{"kind": "int", "lo": 5, "hi": 1}]})


def test_alpha_equivalent_functions_hash_equal() -> None:
    renamed = (
        "def count(values: list[int], k: int) -> int:\n"
        "    found = []\n"
        "    for v in values:\n"
        "        q = v % k\n"
        "        if q not in found:\n"
        "            found.append(q)\n"
        "    return len(found)\n"
    )
    assert ast_hash(renamed) == ast_hash(REFERENCE)


def test_a_different_builtin_or_operator_changes_the_hash() -> None:
    assert ast_hash(REFERENCE) != ast_hash(REFERENCE.replace("len(seen)", "max(seen)"))
    assert ast_hash(REFERENCE) != ast_hash(REFERENCE.replace("x % m", "x // m"))


def test_a_case_whose_ast_hash_does_not_match_its_reference_is_refused() -> None:
    good = _case()
    data = json.loads(good.model_dump_json())
    data["ast_hash"] = "0" * 64
    with pytest.raises(ValidationError, match="ast_hash"):
        Case.model_validate(data)


def test_a_case_with_an_unknown_key_is_refused() -> None:
    data = json.loads(_case().model_dump_json())
    data["fast_source"] = "def solve(xs, m):\n    return 0\n"
    with pytest.raises(ValidationError):
        Case.model_validate(data)


def test_a_case_survives_a_round_trip_through_json(tmp_path: Path) -> None:
    case = _case()
    save_case(case, tmp_path / "c.json")
    assert load_case(tmp_path / "c.json") == case


def test_the_model_view_shows_no_input_value() -> None:
    distinctive = [[[987654321, -55555], 31337, ["qqzzqq", 271.828]]]
    case = _case(edge_inputs=distinctive, benchmark_inputs=[[[123454321], 424242, ["ppw", None]]])
    view = model_view(case).model_dump_json()
    for args in [*case.edge_inputs, *case.benchmark_inputs, *generate_inputs(SPEC, 3, 5)]:
        for value in _leaves(args):
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, int | float) and abs(value) < 100:
                continue  # small numbers appear in any source text
            assert json.dumps(value) not in view
    assert set(json.loads(view)) == {
        "id",
        "family",
        "template",
        "function_name",
        "reference_source",
        "contract",  # the domain in words (None here), never a drawn value
    }


def _leaves(value: object) -> list[object]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


def test_the_shipped_example_cases_load() -> None:
    for path in sorted(EXAMPLES.glob("*.case.json")):
        case = load_case(path)
        assert case.benchmark_inputs and case.edge_inputs


# --- corpus v2 forms: log-uniform lengths, mixtures, benchmark specs drawn per seed -------------


def _lengths(scale: str, count: int = 4000) -> list[int]:
    spec = InputSpec.model_validate(
        {
            "args": [
                {
                    "kind": "list",
                    "item": {"kind": "int", "lo": 0, "hi": 9},
                    "min_len": 0,
                    "max_len": 400,
                    "scale": scale,
                }
            ]
        }
    )
    return [len(args[0]) for args in generate_inputs(spec, 5, count)]  # type: ignore[arg-type]


def test_log_uniform_lengths_make_short_middling_and_long_inputs_all_common() -> None:
    log, uniform = _lengths("log"), _lengths("uniform")
    assert 0.55 < sum(n < 40 for n in log) / len(log) < 0.70
    assert 0.07 < sum(n > 220 for n in log) / len(log) < 0.12
    assert 0.08 < sum(n < 40 for n in uniform) / len(uniform) < 0.12
    assert min(log) == 0 and max(log) == 400


def test_a_mixed_spec_draws_each_input_whole_from_one_of_its_entries() -> None:
    one = {"args": [{"kind": "int", "lo": 1, "hi": 1}, {"kind": "int", "lo": 1, "hi": 1}]}
    two = {"args": [{"kind": "int", "lo": 2, "hi": 2}, {"kind": "int", "lo": 2, "hi": 2}]}
    spec = InputSpec.model_validate({"mix": [one, two]})
    drawn = generate_inputs(spec, 3, 200)
    assert {tuple(args) for args in drawn} == {(1, 1), (2, 2)}  # type: ignore[arg-type]


def test_an_input_spec_with_both_args_and_a_mix_is_refused() -> None:
    with pytest.raises(ValidationError, match="either args or mix"):
        InputSpec.model_validate({"args": [{"kind": "int", "lo": 0, "hi": 1}], "mix": [SPEC]})


def test_a_case_needs_exactly_one_of_fixed_benchmark_inputs_and_benchmark_specs() -> None:
    with pytest.raises(ValidationError, match="exactly one of benchmark_inputs"):
        _case(benchmark_inputs=[])
    with pytest.raises(ValidationError, match="exactly one of benchmark_inputs"):
        _case(benchmark_specs=[SPEC])  # and fixed inputs too


def test_benchmark_specs_draw_fresh_inputs_per_seed_and_the_same_for_one_seed() -> None:
    case = _case(benchmark_inputs=[], benchmark_specs=[SPEC, SPEC])
    first = benchmark_draws(case, 1)
    assert len(first) == 2 and first == benchmark_draws(case, 1)
    assert first != benchmark_draws(case, 2)
    assert first != generate_inputs(SPEC, 1, 2)  # a stream of their own, not the random inputs'
    fixed = _case()
    assert benchmark_draws(fixed, 1) == benchmark_draws(fixed, 2) == fixed.benchmark_inputs


def test_verification_inputs_are_edge_then_random_then_benchmark_with_their_classes() -> None:
    case = _case(benchmark_inputs=[], benchmark_specs=[SPEC])
    drawn = verification_inputs(case, 4, 3)
    assert drawn.classes == ["edge", "random", "random", "random", "benchmark"]
    assert drawn.values[drawn.benchmark] == benchmark_draws(case, 4)
    assert drawn.values[1:4] == generate_inputs(SPEC, 4, 3)
