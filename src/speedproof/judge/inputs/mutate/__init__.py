"""Inputs with the format of a workload's own and content nobody has seen (docs/adr/0057, 0058).

A mutator takes a file's bytes and a `random.Random` seeded from the judgement's secret seed and
derives inputs of the same kind (lines, CSV, JSON, JSON lines, binary): a *variant* for the
variants gate, a slice of the file with record-level changes (drop, duplicate, shuffle,
truncate, empty) and a field-level change in most records (alter or delete a field, edge
numbers, case, odd bytes); or a *mutated twin* for the timed lane, every record kept and most of
them changed gently, so the work stays the work of the original.
"""

from speedproof.judge.inputs.mutate.kinds import KINDS, Kind, detect_kind
from speedproof.judge.inputs.mutate.make import Variant, make_variant, mutated_twin

__all__ = ["KINDS", "Kind", "Variant", "detect_kind", "make_variant", "mutated_twin"]
