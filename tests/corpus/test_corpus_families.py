"""The generator's own guarantees, before any verifier runs (the verifier tests are separate)."""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter
from typing import Any

import pytest

from speedproof.corpus.families import FAMILIES, HELDOUT, SEEN, Family
from speedproof.corpus.families.base import Size
from speedproof.corpus.generate import GenerationConfig, build_pairs
from speedproof.corpus.skeleton import loop_skeleton
from speedproof.functions.case import benchmark_draws, generate_inputs

SMALL = GenerationConfig(
    seed=3, sizes={"train": 16, "dev": 8, "frozen_seen": 8, "frozen_heldout": 6}
)


def _load(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # trusted generator output, checked here before any sandbox
    return namespace["solve"]


def test_there_are_eight_seen_and_three_held_out_families() -> None:
    assert len(SEEN) == 8
    assert {f.name for f in HELDOUT} == {"string_concat", "sort_selection", "indexed_lookup"}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_family_has_at_least_three_templates_with_distinct_loop_skeletons(
    family: Family,
) -> None:
    assert len(family.templates) >= 3
    skeletons = set()
    for template in family.templates:
        knobs = family.knobs(random.Random(0), template.role, 0)
        skeletons.add(loop_skeleton(template.slow(knobs)))
    assert len(skeletons) == len(family.templates)


@pytest.mark.parametrize("family", SEEN, ids=lambda f: f.name)
def test_a_seen_family_has_train_dev_and_frozen_seen_templates(family: Family) -> None:
    roles = Counter(t.role for t in family.templates)
    assert roles["train"] >= 2 and roles["dev"] >= 1 and roles["frozen_seen"] >= 1


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_slow_and_fast_source_agree_on_edge_and_random_inputs(family: Family) -> None:
    for template in family.templates:
        for index in range(len(family.preludes) * len(family.ops)):
            knobs = family.knobs(random.Random(index), template.role, index)
            slow, fast = _load(template.slow(knobs)), _load(template.fast(knobs))
            inputs = family.edges(knobs) + generate_inputs(
                family.inputs(knobs, Size(30, exact=False)), index, 40
            )
            for args in inputs:
                assert slow(*args) == fast(*args), (template.id, knobs, args)


def test_the_same_seed_builds_the_same_cases_and_another_seed_does_not() -> None:
    first = [p.case.model_dump_json() for p in build_pairs(SMALL)]
    again = [p.case.model_dump_json() for p in build_pairs(SMALL)]
    other = [
        p.case.model_dump_json() for p in build_pairs(GenerationConfig(seed=4, sizes=SMALL.sizes))
    ]
    assert first == again
    assert first != other


def test_split_sizes_families_and_benchmark_variants_follow_the_config() -> None:
    pairs = build_pairs(SMALL)
    sizes = Counter(p.split for p in pairs)
    assert dict(sizes) == SMALL.sizes
    assert {p.case.family for p in pairs if p.split == "frozen_heldout"} == {
        f.name for f in HELDOUT
    }
    assert {p.case.family for p in pairs if p.split == "train"} == {f.name for f in SEEN}
    for pair in pairs:
        assert not pair.case.benchmark_inputs  # v2 cases draw them per verification
        drawn = benchmark_draws(pair.case, 1)
        lengths = [len(args[0]) for args in drawn]
        n = lengths[1]
        assert lengths == [n - 1, n, n + 1, n, n]
        assert drawn == benchmark_draws(pair.case, 1)
        assert drawn != benchmark_draws(pair.case, 2)


def test_the_fast_source_never_appears_in_the_serialised_case() -> None:
    for pair in build_pairs(SMALL):
        dumped = pair.case.model_dump_json()
        assert pair.fast_source not in dumped
        assert json.loads(dumped)["reference_source"] != pair.fast_source
        assert pair.fast_source not in repr(pair)


def test_a_trusted_pair_refuses_to_be_pickled() -> None:
    pair = build_pairs(SMALL)[0]
    with pytest.raises(TypeError, match="trusted-side only"):
        pickle.dumps(pair)


def test_no_two_generated_cases_share_a_normalised_source() -> None:
    pairs = build_pairs(GenerationConfig(seed=7))
    assert len(pairs) == 250
    assert len({p.case.ast_hash for p in pairs}) == 250
