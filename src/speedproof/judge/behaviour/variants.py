"""The variants gate: baseline and candidate on inputs nobody has seen, compared (docs/adr/0057).

The behaviour gate compares the sides on the declared workloads and their twins; a candidate can
be right exactly there (answers kept per line or per field, a hand-written parser that agrees on
every line the workloads hold, option validation deleted where no workload needs it, a correct
path taken only under a test harness). Here each workload with declared inputs runs on `count`
variants made from the judgement's secret seed (`inputs/variants.py`) and on edge option values,
untimed, in the sandbox; each variant's folder is visible to its own runs alone.

Per variant the baseline and the candidate run once, compared in the mode the behaviour gate
settled for the original workload, with its normalise rules and output files; where they
differ, the baseline runs again. Both sides failing alike (same exit code and output) is
agreement. A baseline that times out, or answers differently the second time, is skipped with a
note, not charged. The first difference ends the
gate: the candidate is rejected, naming the variant and the first differing line.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from speedproof.ground.invocation import Invocation
from speedproof.ground.process import run_process
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.check import BehaviourResult
from speedproof.judge.behaviour.differences import describe_differences
from speedproof.judge.behaviour.fingerprints import Mode, Observation, observe
from speedproof.judge.behaviour.outputs import clear_outputs, place_outputs, read_outputs
from speedproof.judge.inputs.twins import declared_inputs
from speedproof.judge.inputs.unseen import reads_holdout, show
from speedproof.judge.inputs.variant_settings import VariantSettings
from speedproof.judge.inputs.variants import Recipe, VariantRun, argv_variants, content_variants
from speedproof.judge.policy.evidence import Evidence
from speedproof.judge.worktree.scratch import scratch_folder
from speedproof.manifest import Behaviour, Manifest, Normalise, Workload

Status = Literal["agree", "differs", "skipped", "not-run"]
# Two at a time: nothing here is timed, and the machines this is built for have two cores.
WORKERS = 2
PREFACE = "behaviour differs on an input nobody has seen"
# Variants listed by name in the gate's ledger detail, at most.
LISTED = 60


@dataclass(frozen=True)
class Checked:
    recipe: Recipe
    status: Status
    words: tuple[str, ...] = ()
    # What the mutators did, in words; empty for a variant never made.
    description: str = ""

    def describe(self) -> str:
        head = f"{self.recipe.ident} ({self.description or 'not made'}): {self.status}"
        return "; ".join([head, *self.words])


@dataclass(frozen=True)
class VariantsResult:
    checked: tuple[Checked, ...]
    seconds: float
    settings: VariantSettings

    def differences(self) -> tuple[str, ...]:
        return tuple(
            f"{PREFACE}: {c.recipe.ident} ({c.description}): {'; '.join(c.words)}"
            for c in self.checked
            if c.status == "differs"
        )

    def compared(self) -> dict[str, int]:
        """Content variants compared per workload (argv variants are on top of the count)."""
        counts: dict[str, int] = {}
        for c in self.checked:
            if not c.recipe.argv:
                counts.setdefault(c.recipe.origin, 0)
                counts[c.recipe.origin] += c.status == "agree"
        return counts

    def short(self) -> str | None:
        """A note when a workload compared fewer variants than the manifest requires."""
        required = self.settings.required
        short = {w: n for w, n in self.compared().items() if n < required}
        if not short or self.differences():
            return None
        listed = ", ".join(f"{w} {n}" for w, n in sorted(short.items()))
        return (
            f"too few inputs nobody has seen were compared within the variants budget of "
            f"{self.settings.budget_s:g} s: {listed} of the {required} a workload needs "
            "([variants] minimum); no accept without them"
        )

    def detail(self) -> dict[str, Any]:
        counts = {s: sum(c.status == s for c in self.checked) for s in get_args(Status)}
        return {
            "made": len(self.checked),
            "count": self.settings.count,
            "required": self.settings.required,
            "budget_s": self.settings.budget_s,
            "seconds": round(self.seconds, 3),
            "compared_per_workload": self.compared(),
            **counts,
            "variants": [c.describe() for c in self.checked[:LISTED]],
            "skipped_notes": [c.describe() for c in self.checked if c.status == "skipped"],
        }


def varied_workloads(workloads: Sequence[Workload]) -> list[Workload]:
    """The workloads variants are made of: those running the program on declared inputs that
    exist before the judgement (not generated, not the holdout folder's)."""
    return [
        w
        for w in workloads
        if not w.is_bench and declared_inputs(w) and not w.generate and not reads_holdout(w)
    ]


def make_variants(
    workloads: Sequence[Workload], root: Path, scratch: Path, seed: int, count: int
) -> list[Recipe]:
    """Every variant of one judgement, drawn from its seed: argv ones first (each runs on a
    50-record slice, so a deleted option check is found in the first second), then content
    ones. Each is made when a worker comes to it."""
    chosen = varied_workloads(workloads)
    made: list[Recipe] = []
    if count:
        made.extend(argv_variants(chosen, root, scratch, f"{seed}:argv"))
    for workload in chosen:
        made.extend(content_variants(workload, root, scratch, str(seed), count))
    return made


@dataclass(frozen=True)
class VariantSides:
    """What the variants run with: both programs, the comparison rules and modes, the sandbox,
    and a scratch folder for the runs' own copies of output files."""

    baseline: Program
    candidate: Program
    behaviour: Behaviour
    modes: Mapping[str, Mode]
    prefix: tuple[str, ...]
    sandbox: Sandbox
    scratch: Path


def _run(
    program: Program, variant: VariantRun, sides: VariantSides, mode: Mode
) -> tuple[bool, Observation]:
    """(timed out, what was seen) of one run, with its own copies of the output files."""
    output_files = sides.behaviour.output_files
    if program.outputs is not None and output_files:
        # Runs of one side go two at a time: each gets its own copies.
        program = replace(program, outputs=sides.scratch / f"out-{secrets.token_hex(8)}")
        place_outputs(program)
    invocation = Invocation(show(program, (variant.folder,)), variant.workload, sides.prefix)
    clear_outputs(invocation.program, output_files)
    result = run_process(
        invocation.argv,
        cwd=invocation.cwd,
        sandbox=sides.sandbox,
        spec=invocation.spec(),
        timeout_s=variant.workload.timeout_s,
        stdin=invocation.stdin,
        launcher=False,  # nothing is timed here: 10 ms of CPU a run saved
    )
    seen = observe(result, read_outputs(invocation.program, output_files), sides.behaviour, mode)
    return result.timed_out, seen


def _check(recipe: Recipe, sides: VariantSides) -> Checked:
    variant = recipe.make()

    def checked(status: Status, words: tuple[str, ...] = ()) -> Checked:
        return Checked(recipe, status, words, variant.description)

    # The baseline's second run is asked for only where the sides differ: a variant both answer
    # alike is agreement whatever a second run would say, and this saves a third of the runs.
    mode = sides.modes.get(variant.origin, "exact")
    late, reference = _run(sides.baseline, variant, sides, mode)
    if late:
        return checked("skipped", ("the baseline timed out",))
    late, seen = _run(sides.candidate, variant, sides, mode)
    found = describe_differences(reference, seen)
    if not found:
        return checked("agree")
    _, again = _run(sides.baseline, variant, sides, mode)
    if again.fingerprint != reference.fingerprint:
        moved = describe_differences(reference, again, labels=("first baseline run", "second"))
        return checked("skipped", ("the baseline differs from itself: " + "; ".join(moved),))
    if late:
        found = (f"the candidate timed out after {variant.workload.timeout_s:g} s",)
    return checked("differs", found)


def check_variants(
    variants: Sequence[Recipe],
    sides: VariantSides,
    settings: VariantSettings,
) -> VariantsResult:
    """Run and compare every variant until the first difference or the end of the budget."""
    start = time.perf_counter()
    stop: list[bool] = []

    def one(recipe: Recipe) -> Checked:
        if stop or time.perf_counter() - start > settings.budget_s:
            return Checked(recipe, "not-run")
        checked = _check(recipe, sides)
        if checked.status == "differs":
            stop.append(True)
        return checked

    # One at a time unsandboxed with output files: both runs of a side would write the same file.
    workers = 1 if sides.baseline.outputs is None and sides.behaviour.output_files else WORKERS
    with ThreadPoolExecutor(max_workers=workers) as pool:
        checked = tuple(pool.map(one, variants))
    return VariantsResult(checked, time.perf_counter() - start, settings)


@dataclass(frozen=True)
class GateOutcome:
    """What the judge records of the gate, and the evidence that ends the candidate, if any."""

    passed: bool
    seconds: float
    reasons: tuple[str, ...]
    detail: dict[str, Any]
    ended: Evidence | None = None

    @property
    def record(self) -> tuple[bool, float, tuple[str, ...], dict[str, Any]]:
        """(passed, seconds, reasons, detail), as the ledger's gate row takes them."""
        return self.passed, self.seconds, self.reasons, self.detail


class JudgedSides(Protocol):
    """The judge's two sides: the built programs and both checkouts."""

    programs: dict[str, Program]
    baseline: Tree
    candidate: Tree


# A crash's stack says where each side's code is, and the two sides' code lies at different
# paths and lines: a Python traceback's frames (`  File "…", line N, in f` and the source lines
# under it) and a Go panic's goroutine frames are left out, so that two sides that fail alike on
# a variant, with the same exception or panic message, agree.
_STACK_RULES = (
    Normalise(stream="stderr", pattern=r'(?m)^  File "[^"\n]*", line \d+, in .*\n(    .*\n)*'),
    Normalise(stream="stderr", pattern=r"(?m)^(goroutine \d+ \[[^\]\n]*\]:\n)(.*\n\t.*\n)*"),
)


def for_variants(behaviour: Behaviour, judged: JudgedSides) -> Behaviour:
    """`behaviour` with each side's tree and build folder written alike, and crash stacks left
    out: what differs there between two sides that fail alike is where their code lies."""
    folders = sorted(
        {str(p) for tree in (judged.baseline, judged.candidate) for p in (tree.worktree, tree.out)},
        key=len,
        reverse=True,
    )
    paths = Normalise(pattern="|".join(re.escape(f) for f in folders), replace="<tree>")
    rules = [*behaviour.normalise, paths, *_STACK_RULES]
    return behaviour.model_copy(update={"normalise": rules})


def variants_gate(
    manifest: Manifest,
    judged: JudgedSides,
    behaviour: BehaviourResult,
    *,
    sandbox: Sandbox,
    seed: int,
) -> GateOutcome:
    """The gate on one candidate: variants made from `seed` out of the inputs in the baseline's
    target folder, run by both programs, compared as `behaviour` settled.

    A difference rejects through the policy as a behaviour change; fewer compared variants
    than `[variants] minimum` on any workload ends the candidate inconclusive, unmeasured, with
    a note saying so: an accept needs them all (docs/adr/0057)."""
    settings = manifest.variants
    if settings.count == 0:
        return GateOutcome(True, 0.0, (), {"off": "[variants] count = 0"})
    start = time.perf_counter()
    with scratch_folder() as scratch:
        (scratch / "inputs").mkdir()
        root = judged.baseline.root
        made = make_variants(manifest.workloads, root, scratch / "inputs", seed, settings.count)
        sides = VariantSides(
            judged.programs["baseline"],
            judged.programs["candidate"],
            for_variants(manifest.behaviour, judged),
            {w.workload.id: w.mode for w in behaviour.workloads},
            tuple(manifest.target.prefix),
            sandbox,
            scratch,
        )
        result = check_variants(made, sides, settings)
    seconds = time.perf_counter() - start
    detail = {**result.detail(), "seconds_with_making": round(seconds, 3)}
    differences = result.differences()
    if differences:
        ended = Evidence(
            behaviour_matches=False,
            failure_summary=(),
            safety_checks_passed=True,
            representative_evidence=False,
            comparisons=(),
            behaviour_detail=differences,
        )
        return GateOutcome(False, seconds, differences, detail, ended)
    short = result.short()
    if short is not None:
        unmeasured = Evidence(
            behaviour_matches=True,
            failure_summary=(),
            safety_checks_passed=True,
            representative_evidence=False,
            comparisons=(),
            measurement_notes=(short,),
        )
        return GateOutcome(False, seconds, (short,), detail, unmeasured)
    return GateOutcome(True, seconds, (), detail)
