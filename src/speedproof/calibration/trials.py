"""`speedproof calibrate`: how far to trust verdicts on this machine, for this target.

Three kinds of trial, each measured and decided exactly as the judge measures and decides (the
same `SequentialMeasurement`, the same schedule, the same policy):

- `a/a`: the base revision against a second checkout of itself. Any accept is a false accept,
  any reject a false reject.
- `null`: the base revision against a build with a null change (a comment in the entry file).
- `win`: a known win: the base revision as the candidate against a build slowed by a busy wait
  sized so that the candidate is `win_pct` % faster on the shortest representative workload
  (`sizing.size_wins`), or a user's patch. The acceptance rate is the power, and the
  pairs used say how quickly it gets there.

Trials run interleaved (a/a, null, win, a/a, …) so that a drift of the machine over the run
lands on every kind alike. Builds happen once; each trial is a fresh measurement.
"""

from __future__ import annotations

import secrets
import statistics
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from speedproof.calibration.inject import add_null_change, add_slowdown
from speedproof.calibration.noise import NO_CHANGE, WorkloadNoise, reading_spreads, summarise
from speedproof.calibration.sides import SideCheck, check_sides, trial_scores
from speedproof.calibration.sizing import size_wins
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.git import repository_root
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.check import BehaviourResult, check_behaviour
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.inputs.generated import SEED_LIMIT
from speedproof.judge.inputs.unseen import show, unseen_inputs
from speedproof.judge.measure.environment import describe_environment
from speedproof.judge.measure.pinning import describe as describe_cpus
from speedproof.judge.measure.pinning import timed_cpus
from speedproof.judge.measure.resolution import Spread
from speedproof.judge.measure.runner import Sample
from speedproof.judge.measure.schedule import SequentialMeasurement, Sinks, schedule_for
from speedproof.judge.measure.sequential_rule import Progress, say_nothing
from speedproof.judge.policy.decide import decide
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.judge.worktree.trees import resolve_rev, worktree
from speedproof.manifest_loading import LoadedManifest
from speedproof.stats import Schedule

TrialKind = Literal["a/a", "null", "win"]
KINDS: tuple[TrialKind, ...] = ("a/a", "null", "win")


@dataclass(frozen=True)
class CalibrateOptions:
    trials: int = 10
    win_pct: float = 10.0
    win_patch: str | None = None
    repo: Path | None = None
    base: str = "HEAD"
    pairs: int | None = None
    cache_dir: Path | None = None


@dataclass(frozen=True)
class Trial:
    kind: TrialKind
    index: int
    verdict: str
    pairs: int
    looks: int
    reason: str
    # Workload -> (sd, winsorized sd) of the primary metric's per-pair log ratios at the end.
    spreads: dict[str, Spread] = field(default_factory=dict)
    # Workload -> every timed run of the trial in run order, warm-ups left out: [side, series,
    # pair, position, wall s, CPU s, peak KiB, environment pad]. Kept so that an odd trial (an
    # A/A reject) can be examined pair by pair from the ledger's `calibration` event.
    runs: dict[str, list[list[Any]]] = field(default_factory=dict)
    # Workload -> the normal score of the primary reading's trimmed t (`sides.trial_scores`).
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class KindSummary:
    kind: TrialKind
    trials: int
    accepted: int
    rejected: int
    inconclusive: int
    median_pairs: float
    mean_pairs: float

    @property
    def false_accepts(self) -> int | None:
        return None if self.kind == "win" else self.accepted

    @property
    def false_rejects(self) -> int | None:
        return None if self.kind == "win" else self.rejected


@dataclass(frozen=True)
class CalibrationReport:
    target: str
    base_rev: str
    schedule: dict[str, Any]
    win: dict[str, Any]
    trials: tuple[Trial, ...]
    sandbox: str
    machine: dict[str, Any] = field(default_factory=dict)
    floor_pct: float = 3.0

    def noise(self) -> list[WorkloadNoise]:
        """The machine's noise from the no-change trials, and the wins it lets through."""
        spreads = [t.spreads for t in self.trials if t.kind in NO_CHANGE]
        return summarise(spreads, Schedule(**self.schedule), self.floor_pct)

    def sides(self) -> list[SideCheck]:
        """Whether the no-change trials lean one way or scatter wider than their tests expect."""
        return check_sides((t.kind, t.scores) for t in self.trials if t.kind in NO_CHANGE)

    def summary(self) -> list[KindSummary]:
        found = []
        for kind in KINDS:
            mine = [t for t in self.trials if t.kind == kind]
            if not mine:
                continue
            pairs = [t.pairs for t in mine]
            found.append(
                KindSummary(
                    kind=kind,
                    trials=len(mine),
                    accepted=sum(t.verdict == "accepted" for t in mine),
                    rejected=sum(t.verdict == "rejected" for t in mine),
                    inconclusive=sum(t.verdict == "inconclusive" for t in mine),
                    median_pairs=float(statistics.median(pairs)),
                    mean_pairs=statistics.fmean(pairs),
                )
            )
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "base_rev": self.base_rev,
            "schedule": self.schedule,
            "win": self.win,
            "sandbox": self.sandbox,
            "machine": self.machine,
            "summary": [
                {
                    "kind": s.kind,
                    "trials": s.trials,
                    "accepted": s.accepted,
                    "rejected": s.rejected,
                    "inconclusive": s.inconclusive,
                    "false_accepts": s.false_accepts,
                    "false_rejects": s.false_rejects,
                    "median_pairs": s.median_pairs,
                    "mean_pairs": s.mean_pairs,
                }
                for s in self.summary()
            ],
            "noise": [n.__dict__ for n in self.noise()],
            "sides": [s.__dict__ for s in self.sides()],
            "trials": [t.__dict__ for t in self.trials],
        }


@dataclass
class _Builds:
    programs: dict[str, Program]
    checks: dict[TrialKind, BehaviourResult] = field(default_factory=dict)


class Calibration:
    """Builds the trial programs once, then measures trials through the judge's own schedule."""

    def __init__(
        self,
        loaded: LoadedManifest,
        *,
        sandbox: Sandbox,
        options: CalibrateOptions = CalibrateOptions(),
        progress: Progress = say_nothing,
    ) -> None:
        if options.trials < 1:
            raise ValueError(f"calibrate needs at least one trial, got {options.trials}")
        self.loaded = loaded
        self.manifest = loaded.manifest
        self.sandbox = sandbox
        self.options = options
        self.progress = progress
        self.repo = repository_root(options.repo or loaded.root)
        self.base_rev = resolve_rev(self.repo, options.base)
        self.target_rel = loaded.root.resolve().relative_to(self.repo)
        self.toolchain = toolchain_for(self.manifest, sandbox, caches=options.cache_dir)
        self.schedule: Schedule = schedule_for(self.manifest, options.pairs)
        # Read once, before any measurement narrows this process's own mask.
        self.cpus = timed_cpus(self.manifest.policy.timed_cpus)
        # The folders of the unseen inputs every trial program may read (`_unseen`).
        self._folders: tuple[Path, ...] = ()

    def run(self) -> CalibrationReport:
        with self._checkouts() as trees, self._unseen(trees["base"]):
            builds = self._build(trees)
            sizing: dict[str, Any] | None = None
            if self.options.win_patch is None:
                self.progress("pilot", "sizing the known win with a probe build")
                found = size_wins(
                    self.manifest,
                    self.sandbox,
                    self.toolchain,
                    builds.programs["base"],
                    trees["probe"],
                    [self.options.win_pct],
                    self.cpus,
                )
                add_slowdown(
                    self.manifest, trees["slowed"].root, found.iterations[self.options.win_pct]
                )
                builds.programs["slowed"] = self._built(trees["slowed"])
                sizing = found.to_json()
            self._check_behaviour(builds)
            trials = [
                self._trial(kind, index, builds)
                for index in range(self.options.trials)
                for kind in KINDS
            ]
        return CalibrationReport(
            target=self.manifest.target.name,
            base_rev=self.base_rev,
            schedule={
                "round_pairs": self.schedule.round_pairs,
                "max_pairs": self.schedule.max_pairs,
                "alpha": self.schedule.alpha,
                "rho": self.schedule.rho,
                "budget_s": self.schedule.budget_s,
            },
            win={
                "kind": "patch" if self.options.win_patch else "injected slowdown",
                "win_pct": None if self.options.win_patch else self.options.win_pct,
                "sizing": sizing,
            },
            trials=tuple(trials),
            sandbox=self.sandbox.name,
            machine={
                **describe_environment().as_dict(),
                "timed_cpus": describe_cpus(self.cpus),
            },
            floor_pct=self.manifest.rules().accept_floor_pct,
        )

    # ----- checkouts and builds -----------------------------------------------------------

    @contextmanager
    def _checkouts(self) -> Iterator[dict[str, Tree]]:
        injected = ("slowed", "probe")
        names = (
            "base",
            "copy",
            "null",
            *(injected if self.options.win_patch is None else ("won",)),
        )
        with ExitStack() as stack:
            scratch = stack.enter_context(scratch_folder())
            trees: dict[str, Tree] = {}
            for name in names:
                top = stack.enter_context(worktree(self.repo, self.base_rev)).path
                side: Side = "baseline" if name in ("base", "slowed") else "candidate"
                trees[name] = Tree(side, top, top / self.target_rel, scratch / name)
            add_null_change(self.manifest, trees["null"].root)
            if self.options.win_patch is not None:
                apply_patch(trees["won"].worktree, normalise_patch(self.options.win_patch))
            yield trees

    @contextmanager
    def _unseen(self, base: Tree) -> Iterator[None]:
        """The judge's workloads: generated inputs, the holdout copy and the twins (0030).

        Calibrate measures the judge's rule, so it measures the judge's workloads. Every trial
        program is the base revision or a change calibrate made itself, so every folder is shown
        to every run instead of to the workloads that read it.
        """
        with unseen_inputs(
            self.loaded,
            context=self.toolchain.context,
            baseline=base,
            seed=secrets.randbelow(SEED_LIMIT),
        ) as inputs:
            self._folders = tuple(f for found in inputs.folders.values() for f in found)
            self.manifest = self.loaded.manifest.model_copy(
                update={"workloads": list(inputs.workloads)}
            )
            try:
                yield
            finally:
                self.manifest, self._folders = self.loaded.manifest, ()

    def _build(self, trees: dict[str, Tree]) -> _Builds:
        self.progress("build", f"building {len(trees)} checkouts once")
        return _Builds(
            {
                name: self._built(tree)
                for name, tree in trees.items()
                if name not in ("slowed", "probe")
            }
        )

    def _built(self, tree: Tree) -> Program:
        result = self.toolchain.build(tree)
        if not result.ok or result.program is None:
            raise InfrastructureError(
                f"the {tree.side} checkout does not build:\n{result.log[-2000:]}"
            )
        return show(result.program, self._folders)

    def _pair(self, kind: TrialKind, builds: _Builds) -> dict[Side, Program]:
        programs = builds.programs
        if kind == "a/a":
            base, cand = programs["base"], programs["copy"]
        elif kind == "null":
            base, cand = programs["base"], programs["null"]
        elif "won" in programs:
            base, cand = programs["base"], programs["won"]
        else:
            base, cand = programs["slowed"], programs["base"]
        return {
            "baseline": replace(base, side="baseline"),
            "candidate": replace(cand, side="candidate"),
        }

    def _check_behaviour(self, builds: _Builds) -> None:
        for kind in KINDS:
            pair = self._pair(kind, builds)
            result = check_behaviour(
                pair["baseline"],
                pair["candidate"],
                self.manifest.workloads,
                self.manifest.behaviour,
                prefix=self.manifest.target.prefix,
                sandbox=self.sandbox,
                timeout_for=lambda w: w.timeout_s,
            )
            if not result.matches:
                detail = "; ".join(result.candidate_differences()) or "; ".join(result.detail())
                raise InfrastructureError(
                    f"the {kind} trial programs do not behave alike: {detail}"
                )
            builds.checks[kind] = result

    # ----- trials -------------------------------------------------------------------------

    def _trial(self, kind: TrialKind, index: int, builds: _Builds) -> Trial:
        self.progress("trial", f"{kind} trial {index + 1} of {self.options.trials}")
        runs: dict[str, list[list[Any]]] = {}
        measurement = SequentialMeasurement(
            manifest=self.manifest,
            sandbox=self.sandbox,
            programs=self._pair(kind, builds),
            checks=builds.checks[kind].check_for,
            schedule=self.schedule,
            cpus=self.cpus,
            sinks=Sinks(sample=_keep_into(runs), progress=self.progress),
        )
        evidence = measurement.run()
        verdict = decide(evidence, self.manifest.rules())
        pairs = max(
            (c.n for c in evidence.comparisons if c.lane == "timed" and c.tier == "representative"),
            default=0,
        )
        primary = self.manifest.rules().primary_metric
        return Trial(
            kind,
            index,
            verdict.verdict,
            pairs,
            evidence.look,
            verdict.reasons[0],
            reading_spreads(evidence, primary),
            runs,
            trial_scores(evidence, primary),
        )


def _keep_into(runs: dict[str, list[list[Any]]]) -> Callable[[int, str, Sample], None]:
    """A sample sink that keeps every timed run of a trial, per workload."""

    def keep(series: int, workload: str, sample: Sample) -> None:
        if sample.warmup:
            return
        runs.setdefault(workload, []).append(
            [
                sample.side,
                series,
                sample.pair_index,
                sample.position,
                sample.wall_s,
                sample.cpu_s,
                sample.max_rss_kib,
                sample.env_pad,
            ]
        )

    return keep
