"""The baseline once, as the judge would see it: build, behaviour, a few timed pairs a workload.

Everything here is the judge's own machinery, run on the working tree as it is (the manifest and
its inputs need not be committed yet): the toolchain's build into a throwaway folder outside the
tree, the behaviour gate's baseline runs (the baseline twice: does it exit as expected and repeat
its own output?), and `measure_pairs`, the timed lane's runner, on baseline against itself, under
the sandbox, with the manifest's CPU pinning.

Per workload it reports the median wall time, the per-pair spread and whether the workload is
long enough to measure (`length`).
"""

from __future__ import annotations

import math
import statistics
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from speedproof.ground.errors import SpeedproofError
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.init.length import Status, classify, robust_sd
from speedproof.judge.behaviour.check import BehaviourResult, check_behaviour
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.measure.pinning import timed_cpus
from speedproof.judge.measure.runner import (
    PairSeries,
    RepetitionCheck,
    Round,
    TimeoutRule,
    measure_pairs,
    run_invocation,
)
from speedproof.judge.measure.schedule import schedule_for
from speedproof.manifest import Manifest, Workload
from speedproof.manifest_loading import LoadedManifest, anchor_interpreter, load_manifest
from speedproof.stats import Schedule

# Timed pairs a workload: at most 5 (10 runs after a warm-up a side), fewer when they would take
# more than BUDGET_S, at least 1. Five pairs tell a 3 % spread from a 15 % one; measuring it is
# calibrate's work (the judge's own schedule goes up to 50 pairs).
PAIRS = 5
BUDGET_S = 20.0
# Runs of the empty program behind the start-up figure, after one discarded warm-up.
STARTUP_RUNS = 5
STARTUP_TIMEOUT_S = 30.0
# The stand-in workload that lets a manifest with none yet still build.
_BUILD_ONLY = "build-only"

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default progress sink: say nothing."""


@dataclass(frozen=True)
class WorkloadTiming:
    id: str
    tier: str
    status: Status
    message: str
    runs: int = 0
    pairs: int = 0
    median_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    # Robust standard deviation of the pairs' log ratios, in %; None below two pairs.
    spread_pct: float | None = None
    resolvable_win_pct: float | None = None
    # The pairs the judge's last look would have here (its time budget at this workload's pace).
    judge_pairs: int | None = None
    startup_share: float | None = None


@dataclass(frozen=True)
class FirstRun:
    ran: bool
    build_ok: bool = False
    build_s: float | None = None
    startup_ms: float | None = None
    sandbox: str = ""
    workloads: tuple[WorkloadTiming, ...] = ()
    # What stops the manifest from working: a failed build, a workload that fails, an error.
    problems: tuple[str, ...] = ()
    # Why nothing (or only the build) ran.
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.build_ok and not self.problems

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["ok"] = self.ok
        return found


def first_run(
    path: Path, *, allow_unsandboxed: bool = False, progress: Progress = _quiet
) -> FirstRun:
    """Build the baseline in the manifest at `path` and time each of its workloads."""
    loaded = _loadable(path)
    if loaded is None:
        return FirstRun(ran=False, note="the manifest does not parse: nothing was built")
    try:
        sandbox = make_sandbox(allow_unsandboxed=allow_unsandboxed)
        with tempfile.TemporaryDirectory(prefix="speedproof-init-") as scratch:
            return _Run(loaded, sandbox, progress).run(Path(scratch))
    except SpeedproofError as exc:
        return FirstRun(ran=True, problems=(str(exc),))


def _loadable(path: Path) -> LoadedManifest | None:
    """The manifest; one with no workload yet gets a stand-in so that it can still build."""
    try:
        return load_manifest(path)
    except SpeedproofError:
        pass
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        if data.get("workloads"):
            return None
        manifest = Manifest.model_validate({**data, "workloads": [{"id": _BUILD_ONLY}]})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError):
        return None
    manifest = anchor_interpreter(manifest, path.parent)
    return LoadedManifest(manifest=manifest, path=path.resolve(), text=text)


def _repository_top(root: Path) -> Path:
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return root


class _Run:
    def __init__(self, loaded: LoadedManifest, sandbox: Sandbox, progress: Progress) -> None:
        self.manifest = loaded.manifest
        self.root = loaded.root.resolve()
        self.sandbox = sandbox
        self.progress = progress
        self.cpus = timed_cpus(self.manifest.policy.timed_cpus)
        self.floor_pct = self.manifest.rules().accept_floor_pct

    def run(self, scratch: Path) -> FirstRun:
        toolchain = toolchain_for(self.manifest, self.sandbox)
        tree = Tree("baseline", _repository_top(self.root), self.root, scratch / "baseline")
        self.progress("building the baseline")
        built = toolchain.build(tree)
        if not built.ok or built.program is None:
            said = built.log.strip()[-1500:]
            return FirstRun(
                ran=True,
                build_s=built.duration_s,
                sandbox=self.sandbox.name,
                problems=(f"the baseline does not build:\n{said}",),
            )
        workloads = [w for w in self.manifest.workloads if w.id != _BUILD_ONLY]
        if not workloads:
            return FirstRun(
                ran=True,
                build_ok=True,
                build_s=built.duration_s,
                sandbox=self.sandbox.name,
                note="no workload yet: only the build ran",
            )
        startup = self._startup(built.program)
        timings = self._timings(built.program, workloads, startup)
        problems = tuple(f"workload {t.id!r}: {t.message}" for t in timings if t.status == "failed")
        return FirstRun(
            ran=True,
            build_ok=True,
            build_s=built.duration_s,
            startup_ms=startup * 1000.0,
            sandbox=self.sandbox.name,
            workloads=tuple(timings),
            problems=problems,
        )

    def _startup(self, program: Program) -> float:
        """Median wall of the empty program: the sandbox's start, and the interpreter's."""
        python = self.manifest.target.language == "python"
        empty = (program.argv[0], "-c", "pass") if python else ("true",)
        invocation = Invocation(replace(program, argv=empty), Workload(id="start-up"))
        self.progress("timing the sandbox's start-up")
        walls = [
            run_invocation(
                invocation, sandbox=self.sandbox, timeout_s=STARTUP_TIMEOUT_S, cpus=self.cpus
            ).wall_s
            for _ in range(STARTUP_RUNS + 1)
        ]
        return statistics.median(walls[1:])

    def _timings(
        self, program: Program, workloads: Sequence[Workload], startup_s: float
    ) -> list[WorkloadTiming]:
        runnable = [w for w in workloads if not w.placeholders]
        self.progress(f"checking the behaviour of {len(runnable)} workload(s)")
        behaviour = check_behaviour(
            program,
            replace(program, side="candidate"),
            runnable,
            self.manifest.behaviour,
            prefix=self.manifest.target.prefix,
            sandbox=self.sandbox,
            timeout_for=lambda w: w.timeout_s,
        )
        measured: dict[str, WorkloadTiming | PairSeries] = {}
        for workload in workloads:
            if workload.placeholders:
                said = "its inputs exist only inside a judgement ({out} or {holdout}): not timed"
                measured[workload.id] = WorkloadTiming(
                    workload.id, workload.tier, "not timed", said
                )
            else:
                measured[workload.id] = self._measured(program, workload, behaviour)
        schedule = self._schedule(workloads, measured)
        return [
            found
            if isinstance(found, WorkloadTiming)
            else self._figures(w, found, startup_s, schedule)
            for w in workloads
            for found in (measured[w.id],)
        ]

    def _measured(
        self, program: Program, workload: Workload, behaviour: BehaviourResult
    ) -> WorkloadTiming | PairSeries:
        """The workload's pairs, or why it could not be timed."""
        (judged,) = [w for w in behaviour.workloads if w.workload.id == workload.id]
        if not judged.matches:
            said = "; ".join(judged.differences) or judged.status
            if judged.status == "baseline-failed" and "the manifest expects" in said:
                said += "\n(if that exit status is the command's normal one, set expected_exit)"
            return WorkloadTiming(workload.id, workload.tier, "failed", said)
        self.progress(f"timing workload {workload.id}")
        series = self._series(program, workload, behaviour.check_for(workload.id))
        if not series.clean:
            # A run that crashed, timed out or stopped repeating its own output; both sides are
            # the baseline here, so whichever side it happened on says the same.
            failure = series.measurement_error
            said = failure.message if failure else ""
            said = said or "; ".join(m.describe() for m in series.mismatches)
            return WorkloadTiming(workload.id, workload.tier, "failed", said)
        return series

    def _schedule(
        self, workloads: Sequence[Workload], measured: dict[str, WorkloadTiming | PairSeries]
    ) -> Schedule:
        """The judge's schedule as it would be sized here: its time budget divided by what a
        pair of the slowest representative workload costs (`SequentialRule`'s own sizing)."""
        costs = [
            statistics.fmean(b.wall_s + c.wall_s for b, c in pairs)
            for w in workloads
            if w.tier == "representative"
            and isinstance(series := measured[w.id], PairSeries)
            and (pairs := series.complete_pairs())
        ]
        return schedule_for(self.manifest).within_budget(max(costs, default=0.0))

    def _series(self, program: Program, workload: Workload, check: RepetitionCheck) -> PairSeries:
        """One pair after a warm-up a side, then as many more as fit the budget."""
        prefix = tuple(self.manifest.target.prefix)
        base = Invocation(program, workload, prefix)
        other = Invocation(replace(program, side="candidate"), workload, prefix)
        timeout = TimeoutRule.from_manifest(self.manifest.policy, workload)

        def pairs(count: int, where: Round) -> PairSeries:
            return measure_pairs(
                base,
                other,
                pairs=count,
                sandbox=self.sandbox,
                check=check,
                timeout=timeout,
                round_=where,
            )

        series = pairs(1, Round(warmup=1, cpus=self.cpus))
        walls = [s.wall_s for s in series.samples]
        if not series.clean or not walls:
            return series
        more = min(PAIRS - 1, int(BUDGET_S / (2 * statistics.median(walls))))
        if more < 1:
            return series
        rest = Round(first_pair=1, warmup=0, limit_s=series.timeouts_s[0], cpus=self.cpus)
        return series.extend(pairs(more, rest))

    def _figures(
        self, workload: Workload, series: PairSeries, startup_s: float, schedule: Schedule
    ) -> WorkloadTiming:
        walls = [s.wall_s for s in series.samples]
        ratios = [math.log(c.wall_s) - math.log(b.wall_s) for b, c in series.complete_pairs()]
        median = statistics.median(walls)
        spread = robust_sd(ratios) if len(ratios) >= 2 else None
        resolvable = self._resolvable(spread, schedule)
        share = min(1.0, startup_s / median) if median > 0 else 1.0
        status, message = classify(
            median, startup_s, resolvable, self.floor_pct, (len(ratios), schedule.max_pairs)
        )
        return WorkloadTiming(
            id=workload.id,
            tier=workload.tier,
            status=status,
            message=message,
            runs=len(walls),
            pairs=len(ratios),
            median_ms=median * 1000.0,
            min_ms=min(walls) * 1000.0,
            max_ms=max(walls) * 1000.0,
            spread_pct=None if spread is None else spread * 100.0,
            resolvable_win_pct=resolvable,
            judge_pairs=schedule.max_pairs,
            startup_share=share,
        )

    def _resolvable(self, spread: float | None, schedule: Schedule) -> float | None:
        if spread is None:
            return None
        from speedproof.stats.power import resolvable_win_pct

        representative = sum(w.tier == "representative" for w in self.manifest.workloads)
        return resolvable_win_pct(spread, schedule, workloads=max(1, representative))
