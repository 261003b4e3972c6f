"""The A/A check a campaign runs before its first candidate: the base against itself.

Two checkouts of the base revision are built, their behaviour compared, and then measured
against each other exactly as a candidate would be (`SequentialMeasurement`, the manifest's
schedule, `policy.decide`), as `speedproof calibrate`'s a/a trial does. Identical code must come
out inconclusive; an accept or a reject means this benchmark, on this machine, produces
verdicts that are not about the code, and the campaign stops before spending anything on
proposals. Output that differs between the two checkouts is the same finding, earlier.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import BuildResult, Tree
from speedproof.judge.behaviour.check import Visible, check_behaviour
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.inputs.generated import SEED_LIMIT
from speedproof.judge.inputs.unseen import unseen_inputs
from speedproof.judge.measure.pinning import timed_cpus
from speedproof.judge.measure.runner import Sample
from speedproof.judge.measure.schedule import SequentialMeasurement, Sinks, schedule_for
from speedproof.judge.policy.decide import decide
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.judge.worktree.trees import worktree
from speedproof.manifest import Manifest
from speedproof.manifest_loading import LoadedManifest

Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class Stability:
    """What the A/A check came to: `verdict` is a policy verdict, or "behaviour-differs"."""

    verdict: str
    reasons: tuple[str, ...]
    looks: int
    pairs: int

    def to_record(self) -> dict[str, Any]:
        return {
            "what": "a/a",
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "looks": self.looks,
            "pairs": self.pairs,
        }


def check_stability(
    loaded: LoadedManifest,
    *,
    sandbox: Sandbox,
    repo: Path,
    rev: str,
    cache_dir: Path | None = None,
    progress: Progress,
    on_sample: Callable[[Sample], None] | None = None,
    holdout_dir: Path | None = None,
) -> Stability:
    toolchain = toolchain_for(loaded.manifest, sandbox, caches=cache_dir)
    target_rel = loaded.root.resolve().relative_to(repo)
    with _checkouts(repo, rev, target_rel) as trees:
        progress("a/a", "building the base revision twice")
        programs = {side: _built(toolchain.build, tree) for side, tree in trees.items()}
        # The workloads as a judgement runs them: generated inputs, the holdout copy, twins.
        inputs = unseen_inputs(
            loaded,
            context=toolchain.context,
            baseline=trees["baseline"],
            seed=secrets.randbelow(SEED_LIMIT),
            holdout_dir=holdout_dir,
        )
        with inputs as unseen:
            manifest = loaded.manifest.model_copy(update={"workloads": list(unseen.workloads)})
            return _aa(manifest, sandbox, programs, unseen.visible, progress, on_sample)


def _aa(
    manifest: Manifest,
    sandbox: Sandbox,
    programs: dict[Side, Program],
    visible: Visible,
    progress: Progress,
    on_sample: Callable[[Sample], None] | None,
) -> Stability:
    """Behaviour, then the schedule, of two builds of one revision."""
    behaviour = check_behaviour(
        programs["baseline"],
        programs["candidate"],
        manifest.workloads,
        manifest.behaviour,
        prefix=manifest.target.prefix,
        sandbox=sandbox,
        timeout_for=lambda w: w.timeout_s,
        visible=visible,
    )
    if behaviour.status == "infrastructure":
        raise InfrastructureError("; ".join(behaviour.infrastructure_problems()))
    if not behaviour.matches:
        differences = behaviour.candidate_differences() or tuple(behaviour.detail())
        return Stability("behaviour-differs", tuple(differences), 0, 0)
    progress("a/a", "measuring the base revision against itself")
    measurement = SequentialMeasurement(
        manifest=manifest,
        sandbox=sandbox,
        programs=programs,
        checks=behaviour.check_for,
        schedule=schedule_for(manifest),
        cpus=timed_cpus(manifest.policy.timed_cpus),
        sinks=Sinks(sample=_sampler(on_sample), progress=progress),
        visible=visible,
    )
    evidence = measurement.run()
    verdict = decide(evidence, manifest.rules())
    pairs = max(
        (c.n for c in evidence.comparisons if c.tier == "representative"),
        default=0,
    )
    return Stability(verdict.verdict, verdict.reasons, evidence.look, pairs)


def _sampler(on_sample: Callable[[Sample], None] | None) -> Callable[[int, str, Sample], None]:
    def sink(series: int, workload: str, sample: Sample) -> None:
        if on_sample is not None:
            on_sample(sample)

    return sink


def _built(build: Callable[[Tree], BuildResult], tree: Tree) -> Program:
    result = build(tree)
    if not result.ok or result.program is None:
        raise InfrastructureError(f"the base revision does not build:\n{result.log[-2000:]}")
    return replace(result.program, side=tree.side)


@contextmanager
def _checkouts(repo: Path, rev: str, target_rel: Path) -> Iterator[dict[Side, Tree]]:
    with ExitStack() as stack:
        scratch = stack.enter_context(scratch_folder())
        trees: dict[Side, Tree] = {}
        sides: tuple[Side, ...] = ("baseline", "candidate")
        for side in sides:
            top = stack.enter_context(worktree(repo, rev)).path
            trees[side] = Tree(side, top, top / target_rel, scratch / side)
        yield trees
