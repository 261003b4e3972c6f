"""The families, one module each: eight seen in training and three held out of it entirely."""

from __future__ import annotations

from speedproof.corpus.families import (
    complement_lookup,
    distinct_cardinality,
    frequency_index,
    hash_membership,
    indexed_lookup,
    prefix_range_query,
    running_aggregate,
    sliding_window,
    sort_selection,
    stable_dedup,
    string_concat,
)
from speedproof.corpus.families.base import Family, Knobs, Prelude, Template

FAMILIES: tuple[Family, ...] = (
    hash_membership.FAMILY,
    distinct_cardinality.FAMILY,
    stable_dedup.FAMILY,
    frequency_index.FAMILY,
    complement_lookup.FAMILY,
    running_aggregate.FAMILY,
    prefix_range_query.FAMILY,
    sliding_window.FAMILY,
    string_concat.FAMILY,
    sort_selection.FAMILY,
    indexed_lookup.FAMILY,
)
SEEN: tuple[Family, ...] = tuple(f for f in FAMILIES if f.seen)
HELDOUT: tuple[Family, ...] = tuple(f for f in FAMILIES if not f.seen)
BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}

__all__ = ["BY_NAME", "FAMILIES", "HELDOUT", "SEEN", "Family", "Knobs", "Prelude", "Template"]
