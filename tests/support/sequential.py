"""The sequential rule's tests' toy manifest and a stream of paired readings with a known win."""

from __future__ import annotations

import numpy as np

from speedproof.judge.measure.replay import RecordedWorkload
from speedproof.manifest import Manifest
from speedproof.manifest_loading import parse_manifest
from support.toy_target import toy_manifest, workload_table

MANIFEST = toy_manifest(workload_table("parse", "prog.py"), instructions=False)


def manifest() -> Manifest:
    return parse_manifest(MANIFEST, "speedproof.toml")


def per_workload_budget() -> Manifest:
    """The toy manifest whose time budget is `max_measure_s` a workload alone, never raised to
    what the first round's noise asks for (`max_total_measure_s = 0`)."""
    found = manifest()
    policy = found.policy.model_copy(update={"max_total_measure_s": 0.0})
    return found.model_copy(update={"policy": policy})


def stream(n: int, cv: float, ratio: float, seed: int) -> RecordedWorkload:
    rng = np.random.default_rng(seed)
    base = 0.1 * np.exp(rng.normal(0.0, cv, n))
    cand = 0.1 * ratio * np.exp(rng.normal(0.0, cv, n))
    return RecordedWorkload.of_wall("parse", [float(x) for x in base], [float(x) for x in cand])
