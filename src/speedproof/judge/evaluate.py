"""One candidate through every gate and the timed lane to evidence, a verdict and a ledger record.

The order is the architecture's: guard → apply → guard again → build → tests → behaviour →
measurement → policy; the tests run beside the inputs and behaviour stages (`tests_alongside`).
Each gate's result lands in the ledger as it finishes; a gate that fails ends the candidate, and
even then the verdict comes from `policy.decide`: one place turns evidence into words.

Its parts: `isolation` (nothing a candidate runs persists), `instruction_lane` (counts under
Cachegrind, the baseline's cached), `early_end` (a gate that ends the candidate) and `outcome`
(what the judgement came to, and its JSON).
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from speedproof.ground.errors import InfrastructureError, PatchError
from speedproof.ground.git import repository_root
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import BuildResult, TargetToolchain, Tree
from speedproof.judge.behaviour.check import (
    BehaviourResult,
    check_behaviour,
)
from speedproof.judge.behaviour.variants import variants_gate
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.early_end import Ended, failed, unsafe
from speedproof.judge.guard.check import GuardResult, check_applied, check_patch
from speedproof.judge.guard.patch_text import normalise_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.inputs.generated import SEED_LIMIT
from speedproof.judge.inputs.unseen import UnseenInputs, unseen_inputs
from speedproof.judge.isolation import Isolation, Sides, relocated_copy, wrote_reason
from speedproof.judge.measure.environment import describe_environment
from speedproof.judge.measure.instruction_lane import InstructionLane
from speedproof.judge.measure.pinning import describe as describe_cpus
from speedproof.judge.measure.pinning import timed_cpus
from speedproof.judge.measure.readings import size_comparison
from speedproof.judge.measure.runner import Sample
from speedproof.judge.measure.schedule import SequentialMeasurement, Sinks, schedule_for
from speedproof.judge.measure.sequential_rule import Progress, say_nothing
from speedproof.judge.outcome import GateRecord, Outcome, pairs_per_workload
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Comparison, Evidence
from speedproof.judge.tests.gate import TestGateResult, run_test_pair
from speedproof.judge.tests_alongside import TestRuns, TestsAlongside, alongside
from speedproof.judge.worktree import snapshot
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.scratch import sweep_scratch
from speedproof.judge.worktree.trees import resolve_rev
from speedproof.ledger import CandidateWriter, SampleRow
from speedproof.manifest import Manifest, Workload
from speedproof.manifest_loading import LoadedManifest
from speedproof.stats import Schedule


@dataclass(frozen=True)
class JudgeOptions:
    repo: Path | None = None
    base: str = "HEAD"
    pairs: int | None = None
    origin: str = "judge"
    campaign: str | None = None
    cache_dir: Path | None = None
    # Override the manifest's instruction lane: False skips it (tests that only need verdicts
    # from the timed lane), None follows the manifest.
    instructions: bool | None = None
    # A folder of holdout inputs named by `{holdout}`, over the manifest's `[holdout] dir`.
    holdout_dir: Path | None = None
    # The sequential schedule's time budget and cap, times this (`verify` measures with more).
    budget_multiple: float = 1.0
    # False: measure to the last look, never stop early for want of a reachable outcome.
    stops_early: bool = True

    def schedule(self, manifest: Manifest) -> Schedule:
        """The schedule these options judge `manifest` with."""
        return schedule_for(
            manifest,
            self.pairs,
            budget_multiple=self.budget_multiple,
            stops_early=self.stops_early,
        )


class Judge:
    """Judges candidates against one target at one base revision."""

    def __init__(
        self,
        loaded: LoadedManifest,
        *,
        sandbox: Sandbox,
        ledger: CandidateWriter,
        options: JudgeOptions = JudgeOptions(),
        progress: Progress = say_nothing,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> None:
        self.loaded = loaded
        self.manifest = loaded.manifest
        self.sandbox = sandbox
        self.ledger = ledger
        self.options = options
        self.progress = progress
        self.on_sample = on_sample
        self.repo = repository_root(options.repo or loaded.root)
        self.base_rev = resolve_rev(self.repo, options.base)
        self.protected = ProtectedPaths.for_manifest(loaded, self.repo)
        # Folders a killed judge left in /tmp (judge/worktree/scratch.py); a live judge's are kept.
        sweep_scratch()
        self.target_rel = loaded.root.resolve().relative_to(self.repo)
        self.schedule = options.schedule(self.manifest)
        # Read once, before anything is measured: a setting this machine cannot meet stops here.
        self.timed_cpus = timed_cpus(self.manifest.policy.timed_cpus)
        self.isolation = Isolation(
            target_rel=self.target_rel,
            outputs=tuple(self.manifest.behaviour.output_files),
            sandboxed=sandbox.name != "none",
        )
        self.instruction_lane = InstructionLane(
            sandbox=sandbox, base_rev=self.base_rev, progress=progress
        )
        # The judgement's unseen inputs while behaviour and measurement run, and its seed.
        self._inputs: UnseenInputs | None = None
        self._seed = 0
        self.gates: list[GateRecord] = []
        self.timings: dict[str, float] = {}

    @functools.cached_property
    def toolchain(self) -> TargetToolchain:
        """The target's builder and test runner, looked for once a patch has passed the first
        guard: a refused patch needs no compiler or interpreter (for logstat the lookup was 0.14
        of the judgement's 0.32 s at load 1.5, `go env` most of it)."""
        return toolchain_for(self.loaded.manifest, self.sandbox, caches=self.options.cache_dir)

    # ----- the path of one candidate ------------------------------------------------------

    def judge(self, patch_text: str) -> Outcome:
        patch = normalise_patch(patch_text)
        self.gates, self.timings = [], {}
        started = time.perf_counter()
        # The first guard reads the patch text alone, so it runs before anything is looked up:
        # a patch it refuses costs no toolchain, no version probes and no worktree.
        guard = self._check_guard(patch)
        candidate_id = self.ledger.start_candidate(
            origin=self.options.origin,
            campaign=self.options.campaign,
            target=self.manifest.target.name,
            repo=self.repo,
            base_rev=self.base_rev,
            patch_sha256=hashlib.sha256(patch.encode()).hexdigest(),
            diff=patch,
            sandbox=self.sandbox.name,
            facts=self._facts(refused=not guard[0].passed),
        )
        try:
            evidence, series = self._evidence(candidate_id, patch, guard)
        except Ended as ended:
            evidence, series = ended.evidence, 0
        except BaseException as exc:
            self.timings["total"] = time.perf_counter() - started
            self.ledger.finish(
                candidate_id,
                verdict=None,
                reasons=[],
                rests_on=None,
                lane=None,
                timings=self.timings,
                error=_error_text(exc),
            )
            raise
        self.timings["total"] = time.perf_counter() - started
        verdict = decide(evidence, self.manifest.rules())
        self.ledger.add_comparisons(candidate_id, evidence.comparisons)
        self.ledger.finish(
            candidate_id,
            verdict=verdict.verdict,
            reasons=[*verdict.reasons, *verdict.notes],
            rests_on=verdict.rests_on,
            lane=verdict.lane,
            timings=self.timings,
        )
        return Outcome(
            verdict=verdict,
            gates=tuple(self.gates),
            comparisons=evidence.comparisons,
            ledger_id=candidate_id,
            sandbox=self.sandbox.name,
            base_rev=self.base_rev,
            timings=dict(self.timings),
            looks=series,
            pairs=pairs_per_workload(evidence.comparisons),
        )

    def _facts(self, *, refused: bool) -> dict[str, Any]:
        """The judgement's setting as the ledger records it. For a patch the first guard refused,
        only what costs nothing to read: nothing about the machine, toolchain or sandbox."""
        facts: dict[str, Any] = {
            "timed_cpus": describe_cpus(self.timed_cpus),
            "schedule": {
                "round_pairs": self.schedule.round_pairs,
                "max_pairs": self.schedule.max_pairs,
                "budget_s": self.schedule.budget_s,
                "alpha": self.schedule.alpha,
                "looks": self.schedule.looks(),
            },
            "lane": self.manifest.lane,
            "instruction_lane": self._instructions_on(self.manifest),
            "target_folder": str(self.target_rel),
        }
        if refused:
            return {**facts, "refused_by": "guard"}
        return {
            "machine": describe_environment(go=None).as_dict(),
            **facts,
            "toolchain": self.toolchain.versions(),
            "unseen_inputs": self._draw_seed(),
            "sandbox_mounts": self.isolation.mounts(self.toolchain.context.tools),
        }

    def _evidence(
        self, candidate_id: int, patch: str, guard: tuple[GuardResult, float]
    ) -> tuple[Evidence, int]:
        self._guard(candidate_id, guard)
        with self.isolation.sides(self.repo, self.base_rev) as sides:
            self._apply(candidate_id, sides, patch)
            self._build(candidate_id, sides)
            self.isolation.settle(sides)
            with (
                self._tests(candidate_id, sides) as tests,
                self._unseen(candidate_id, sides) as judged,
            ):
                behaviour = self._behaviour(candidate_id, sides, judged)
                tests.join()
                self._untouched(candidate_id, sides, "tests")
                self._untouched(candidate_id, sides, "behaviour")
                self._variants(candidate_id, sides, behaviour)
                measured = self._measure(candidate_id, sides, behaviour, judged)
            self._untouched(candidate_id, sides, "measure")
            return measured

    # ----- nothing a candidate runs may persist (`judge.isolation`) ------------------------

    def _untouched(self, candidate_id: int, sides: Sides, stage: str) -> None:
        """Reject a candidate whose code changed its tree or its build during `stage`."""
        for side, before in sides.snapshots.items():
            self._check_writes(candidate_id, before, sides.tree(side), stage)

    def _check_writes(
        self,
        candidate_id: int,
        before: tuple[snapshot.Snapshot, snapshot.Snapshot],
        tree: Tree,
        stage: str,
    ) -> None:
        """Reject what a side wrote in its tree or build folder beyond its declared outputs."""
        where = self.isolation.written(before)
        if where is None:
            return
        reason = wrote_reason(tree.side, where, stage)
        self._gate(candidate_id, f"untouched-{stage}", False, 0.0, (reason,))
        raise Ended(unsafe(reason))

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        self.progress(name, "")
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start

    def _gate(
        self,
        candidate_id: int,
        name: str,
        passed: bool,
        seconds: float,
        reasons: tuple[str, ...] = (),
        detail: dict[str, Any] | None = None,
    ) -> None:
        record = GateRecord(name, passed, seconds, reasons, detail or {})
        self.gates.append(record)
        self.ledger.add_gate(
            candidate_id, name, passed, seconds, {"reasons": list(reasons), **record.detail}
        )
        self.progress(name, "passed" if passed else "; ".join(reasons) or "failed")

    def _check_guard(self, patch: str) -> tuple[GuardResult, float]:
        """The first guard's result and its seconds; `_guard` records it once the candidate is."""
        start = time.perf_counter()
        with self._stage("guard"):
            result = check_patch(patch, self.protected)
        return result, time.perf_counter() - start

    def _guard(self, candidate_id: int, guard: tuple[GuardResult, float]) -> None:
        result, seconds = guard
        reasons = result.reasons()
        self._gate(candidate_id, "guard", result.passed, seconds, reasons)
        if not result.passed:
            raise Ended(unsafe(*reasons))

    def _apply(self, candidate_id: int, sides: Sides, patch: str) -> None:
        start = time.perf_counter()
        with self._stage("apply"):
            try:
                applied = apply_patch(sides.candidate.worktree, patch)
            except PatchError as exc:
                self._gate(candidate_id, "apply", False, time.perf_counter() - start, (str(exc),))
                raise Ended(failed(f"the patch does not apply: {exc}")) from exc
            self.ledger.add_commands(
                candidate_id, "apply", [(c.argv, c.returncode, None) for c in applied.commands]
            )
            self._gate(
                candidate_id,
                "apply",
                True,
                time.perf_counter() - start,
                # Hunks placed away from their header's line or with fuzz, in words; [] when
                # every hunk went in exactly where it said.
                detail={"method": applied.method, "patch_fuzz": list(applied.fuzz_notes)},
            )
            after = check_applied(sides.candidate.worktree, self.base_rev, self.protected)
        reasons = after.reasons()
        self._gate(candidate_id, "guard-applied", after.passed, 0.0, reasons)
        if not after.passed:
            raise Ended(unsafe(*reasons))

    def _build(self, candidate_id: int, sides: Sides) -> None:
        with self._stage("build"), ThreadPoolExecutor(max_workers=2) as pool:
            # Both sides at once: builds are not timed, and on a 2-core machine this takes the
            # stage from the sum of the two builds to about the longer one.
            building = pool.submit(self.toolchain.build, sides.candidate)
            base = self.toolchain.build(sides.baseline)
            cand = building.result()
            self._record_build(candidate_id, "build-baseline", base)
            if not base.ok or base.program is None:
                raise InfrastructureError(f"the baseline does not build:\n{base.log[-2000:]}")
            self._record_build(candidate_id, "build", cand)
        if not cand.ok or cand.program is None:
            raise Ended(failed(f"the candidate does not build: {cand.log[-600:].strip()}"))
        sides.programs = {"baseline": base.program, "candidate": cand.program}

    def _record_build(self, candidate_id: int, name: str, result: BuildResult) -> None:
        self.ledger.add_commands(candidate_id, name, [(c, None, None) for c in result.commands])
        reasons = () if result.ok else (result.log[-600:].strip(),)
        self._gate(
            candidate_id, name, result.ok, result.duration_s, reasons, {"log": result.log[-4000:]}
        )

    @contextmanager
    def _tests(self, candidate_id: int, sides: Sides) -> Iterator[TestsAlongside]:
        """The test gate, its runs beside the inputs and behaviour stages (`tests_alongside`)."""
        self.progress("tests", "")
        with self.isolation.copies(sides, "tests") as (base_tree, cand_tree):

            def run() -> TestRuns:
                start = time.perf_counter()
                base, cand = run_test_pair(
                    self.toolchain,
                    base_tree,
                    cand_tree,
                    revision=self.base_rev,
                    cache_dir=self.toolchain.context.caches,
                )
                return TestRuns(base, cand, time.perf_counter() - start)

            def finish(runs: TestRuns) -> None:
                start = time.perf_counter()
                result = runs.judged(self.toolchain, base_tree, cand_tree)
                self._record_tests(candidate_id, result, runs, time.perf_counter() - start)

            with alongside(run, finish, beside=self.isolation.sandboxed) as tests:
                yield tests

    def _record_tests(
        self, candidate_id: int, result: TestGateResult, runs: TestRuns, judging_s: float
    ) -> None:
        seconds = runs.seconds + judging_s
        self.timings["tests"] = seconds
        self._gate(
            candidate_id, "tests", result.passed, seconds, result.reasons(), runs.detail(result)
        )
        if not result.passed:
            raise Ended(failed(*result.reasons()))

    def _behaviour(self, candidate_id: int, sides: Sides, judged: Manifest) -> BehaviourResult:
        start = time.perf_counter()
        with (
            self._stage("behaviour"),
            self.isolation.copies(sides, "behaviour", build=True) as copies,
        ):
            # Run from writable copies of the tree and the build, so a run that tries to leave
            # something for later runs succeeds there, is seen, and is named; the measured runs
            # then see both read-only.
            programs = {tree.side: relocated_copy(sides, tree) for tree in copies}
            before = {
                tree.side: (snapshot.take(tree.worktree), snapshot.take(tree.out))
                for tree in copies
            }
            result = check_behaviour(
                programs["baseline"],
                programs["candidate"],
                judged.workloads,
                judged.behaviour,
                prefix=judged.target.prefix,
                sandbox=self.sandbox,
                timeout_for=lambda w: w.timeout_s,
                visible=self._visible,
            )
            for tree in copies:
                self._check_writes(candidate_id, before[tree.side], tree, "behaviour")
        if result.status == "infrastructure":
            raise InfrastructureError("; ".join(result.infrastructure_problems()))
        self._gate(
            candidate_id,
            "behaviour",
            result.matches,
            time.perf_counter() - start,
            result.candidate_differences(),
            {"workloads": list(result.detail())},
        )
        if not result.matches:
            raise Ended(
                Evidence(
                    behaviour_matches=False,
                    failure_summary=(),
                    safety_checks_passed=True,
                    representative_evidence=False,
                    comparisons=(),
                    behaviour_detail=result.candidate_differences(),
                    measurement_notes=result.mode_notes(),
                )
            )
        return result

    # ----- inputs the candidate cannot have seen (docs/adr/0030) -----------------------------

    def _draw_seed(self) -> dict[str, Any]:
        """A fresh secret seed for this judgement's generators, recorded in the ledger's facts."""
        self._seed = secrets.randbelow(SEED_LIMIT)
        return {"seed": self._seed, "holdout_dir_given": self.options.holdout_dir is not None}

    @contextmanager
    def _unseen(self, candidate_id: int, sides: Sides) -> Iterator[Manifest]:
        """Generated inputs, the holdout copy and the twins, for behaviour and measurement.

        Yields the judgement's manifest: the loaded one with the judgement's own workloads
        (placeholders filled, twins added as holdout-tier workloads), which behaviour and
        measurement are given in place of the loaded one, so no gate changes.
        """
        start = time.perf_counter()
        with ExitStack() as stack:
            with self._stage("inputs"):
                inputs = stack.enter_context(
                    unseen_inputs(
                        self.loaded,
                        context=self.toolchain.context,
                        baseline=sides.baseline,
                        seed=self._seed,
                        holdout_dir=self.options.holdout_dir,
                    )
                )
            for made in inputs.generated:
                detail = {"seed": self._seed, "argv": list(made.argv), "log": made.log}
                self._gate(
                    candidate_id, f"generate:{made.workload}", True, made.seconds, (), detail
                )
            made_here = {
                "twins": list(inputs.twins),
                "generated": [g.workload for g in inputs.generated],
            }
            self._gate(candidate_id, "inputs", True, time.perf_counter() - start, (), made_here)
            judged = self.loaded.manifest.model_copy(update={"workloads": list(inputs.workloads)})
            self._inputs = inputs
            try:
                yield judged
            finally:
                self._inputs = None

    def _variants(self, candidate_id: int, sides: Sides, behaviour: BehaviourResult) -> None:
        """Both sides on inputs nobody has seen, made from the seed (docs/adr/0057)."""
        with self._stage("variants"):
            found = variants_gate(
                self.loaded.manifest, sides, behaviour, sandbox=self.sandbox, seed=self._seed
            )
        self._gate(candidate_id, "variants", *found.record)
        if found.ended is not None:
            raise Ended(found.ended)

    def _visible(self, program: Program, workload: Workload) -> Program:
        """`program` able to read `workload`'s unseen inputs, if it has any."""
        return program if self._inputs is None else self._inputs.visible(program, workload)

    # ----- measurement --------------------------------------------------------------------

    def _measure(
        self, candidate_id: int, sides: Sides, behaviour: BehaviourResult, judged: Manifest
    ) -> tuple[Evidence, int]:
        with self._stage("measure"):
            fixed = [
                *self._instructions(candidate_id, sides, behaviour, judged),
                *self._size(sides),
            ]
            measurement = SequentialMeasurement(
                manifest=judged,
                sandbox=self.sandbox,
                programs={
                    "baseline": sides.programs["baseline"],
                    "candidate": sides.programs["candidate"],
                },
                checks=behaviour.check_for,
                schedule=self.schedule,
                cpus=self.timed_cpus,
                sinks=Sinks(
                    sample=lambda index, workload, sample: self._sample(
                        candidate_id, index, workload, sample
                    ),
                    gate=lambda name, passed, seconds, reasons, detail: self._gate(
                        candidate_id, name, passed, seconds, reasons, detail
                    ),
                    progress=self.progress,
                ),
                fixed_readings=fixed,
                visible=self._visible,
            )
            evidence = measurement.run()
        # How behaviour was compared is said beside the verdict (the sorted-lines switch).
        notes = (*behaviour.mode_notes(), *evidence.measurement_notes)
        return replace(evidence, measurement_notes=notes), evidence.look

    def _sample(self, candidate_id: int, index: int, workload: str, sample: Sample) -> None:
        # Each sample is committed as it is taken, so a crash or Ctrl-C keeps every run so far.
        # Outside the timed region: the runner calls back between runs.
        if not sample.warmup:
            self.ledger.add_samples(candidate_id, [_row(index, workload, sample)])
        if self.on_sample is not None:
            self.on_sample(sample)

    def _instructions_on(self, manifest: Manifest) -> bool:
        if self.options.instructions is not None:
            return self.options.instructions
        return manifest.counts_instructions

    def _instructions(
        self, candidate_id: int, sides: Sides, behaviour: BehaviourResult, judged: Manifest
    ) -> list[Comparison]:
        """The instruction lane (`judge.instruction_lane`), when it runs for this judgement."""
        if not self._instructions_on(judged):
            return []
        return self.instruction_lane.compare(
            judged,
            sides.programs,
            behaviour,
            visible=self._visible,
            gate=lambda name, passed, seconds, reasons, detail: self._gate(
                candidate_id, name, passed, seconds, reasons, detail
            ),
        )

    def _size(self, sides: Sides) -> list[Comparison]:
        base = sides.programs["baseline"].binary_size
        cand = sides.programs["candidate"].binary_size
        if base is None or cand is None:
            return []
        return [size_comparison(base, cand)]


def _row(series: int, workload: str, s: Sample) -> SampleRow:
    return SampleRow(
        series,
        workload,
        s.side,
        s.pair_index,
        s.position,
        s.wall_s,
        s.cpu_s,
        s.max_rss_kib,
        s.exit_code,
        s.stdout_sha256,
        s.env_pad,
        s.reported,
    )


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return f"{type(exc).__name__}: {exc}"
