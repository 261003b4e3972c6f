from __future__ import annotations

import random

import pytest

from speedproof.corpus.families import FAMILIES
from speedproof.corpus.families.base import MASK, MODULUS, SCALE, SHIFT, WIDTH
from speedproof.corpus.literals import SPLITS, band, draw


@pytest.mark.parametrize("base", [MODULUS, WIDTH, SCALE, SHIFT, MASK, (16, 95), (10, 89)])
def test_the_four_split_bands_are_disjoint_and_cover_the_base_range(
    base: tuple[int, int],
) -> None:
    bands = [band(*base, split) for split in SPLITS]
    covered = [v for lo, hi in bands for v in range(lo, hi + 1)]
    assert covered == list(range(base[0], base[1] + 1))
    assert all(lo <= hi for lo, hi in bands)


def test_a_drawn_literal_stays_in_its_split_band() -> None:
    rng = random.Random(1)
    for split in SPLITS:
        lo, hi = band(100, 899, split)
        assert all(lo <= draw(rng, 100, 899, split) <= hi for _ in range(200))


def test_a_range_too_narrow_for_four_bands_is_refused() -> None:
    with pytest.raises(ValueError, match="too narrow"):
        band(1, 3, "train")


def test_every_literal_a_family_draws_for_one_split_is_never_drawn_for_another() -> None:
    drawn: dict[str, set[tuple[str, int]]] = {}
    for split in SPLITS:
        values: set[tuple[str, int]] = set()
        for family in FAMILIES:
            for index in range(12):
                knobs = family.knobs(random.Random(index), split, index)
                values |= {(knobs.prelude.kind, v) for v in knobs.prelude.literals}
                values |= {(name, v) for name, v in knobs.params}
        drawn[split] = values
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            assert not drawn[a] & drawn[b], (a, b)
