"""The behaviour gate: does the candidate do what the baseline does, on every workload?

For each workload (every tier) the baseline runs twice against itself first:

- the two runs agree → the workload is compared `exact`ly: exit code, stdout digest, stderr
  digest (unless `compare_stderr = false`) and a digest of every declared output file, each
  stream after the manifest's `normalise` rules;
- they differ, but agree once the lines of stdout and stderr are sorted → the workload is
  compared as `sorted-lines` from then on, and the result says so (a program that prints a map
  or a set, or joins goroutines, is deterministic in content and not in order);
- they still differ → the workload is `nondeterministic`. That is an infrastructure problem of
  the target, not a failure of the candidate: the candidate is not run on it, and the result asks
  for a normalise rule. A baseline that times out or misses its `expected_exit` is
  `baseline-failed`, also an infrastructure problem.

Then the candidate runs once and is compared with the reference (the first baseline run). The
reference is kept, with its normalised content, so that the timed lane can check every later
repetition against it (`ReferenceCheck`): determinism is asserted on every run, not assumed from
two. Output files are removed before each run, so a stale file never matches. In the sandbox
the tree is read-only and each declared output file is a per-run copy outside it, bound over an
empty placeholder (`speedproof.ground.program.output_path`); a copy the run never wrote reads as
absent.

Output files are not sorted in `sorted-lines` mode and not normalised: a file is an artefact a
user reads back, and a reordered file is a different file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult
from speedproof.ground.program import Program
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.behaviour.differences import CANDIDATE_LABELS, Labels, describe_differences
from speedproof.judge.behaviour.fingerprints import Fingerprint, Mode, Observation, observe
from speedproof.judge.behaviour.outputs import OutputFile, clear_outputs, read_outputs
from speedproof.judge.measure.runner import run_invocation
from speedproof.judge.policy.evidence import TWIN_SUFFIX
from speedproof.manifest import Behaviour, Workload

Status = Literal["match", "differs", "nondeterministic", "baseline-failed"]

_SELF: Labels = ("first baseline run", "second baseline run")
_REPEAT: Labels = ("reference", "this baseline run")
_HINT = (
    "add a [[behaviour.normalise]] rule for the part that changes (a timestamp, a duration, "
    "an address), or set compare_stderr = false if only stderr changes"
)


# ---------------------------------------------------------------------------------------------
# Checking every repetition


@dataclass(frozen=True)
class ReferenceCheck:
    """The timed lane's `RepetitionCheck`: each run must reproduce the gate's reference."""

    reference: Observation
    behaviour: Behaviour

    def prepare(self, invocation: Invocation) -> None:
        clear_outputs(invocation.program, self.behaviour.output_files)

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]:
        outputs = read_outputs(invocation.program, self.behaviour.output_files)
        seen = observe(result, outputs, self.behaviour, self.reference.fingerprint.mode)
        if seen.fingerprint == self.reference.fingerprint:
            return ()
        labels = CANDIDATE_LABELS if invocation.program.side == "candidate" else _REPEAT
        return describe_differences(
            self.reference, seen, expected_exit=invocation.workload.expected_exit, labels=labels
        )


# ---------------------------------------------------------------------------------------------
# The gate


@dataclass(frozen=True)
class WorkloadBehaviour:
    workload: Workload
    # For a nondeterministic workload, the last mode tried: sorted-lines.
    mode: Mode
    status: Status
    # Candidate differences for "differs"; what went wrong with the baseline otherwise.
    differences: tuple[str, ...]
    baseline_reference: Fingerprint
    candidate: Fingerprint | None
    # Facts worth a line in the ledger, e.g. the switch to sorted-lines and why.
    notes: tuple[str, ...] = ()
    reference: Observation | None = field(default=None, repr=False, compare=False)

    @property
    def matches(self) -> bool:
        return self.status == "match"

    @property
    def infrastructure(self) -> bool:
        """True when the workload could not judge the candidate: the baseline is at fault."""
        return self.status in ("nondeterministic", "baseline-failed")

    def describe(self) -> str:
        head = f"{self.workload.id} ({self.mode}): {self.status}"
        return "; ".join([head, *self.notes, *self.differences])


@dataclass(frozen=True)
class BehaviourResult:
    workloads: tuple[WorkloadBehaviour, ...]
    behaviour: Behaviour

    @property
    def status(self) -> Literal["match", "differs", "infrastructure"]:
        """A candidate difference on any workload outranks a baseline problem on another."""
        if any(w.status == "differs" for w in self.workloads):
            return "differs"
        if any(w.infrastructure for w in self.workloads):
            return "infrastructure"
        return "match"

    @property
    def matches(self) -> bool:
        return self.status == "match"

    def candidate_differences(self) -> tuple[str, ...]:
        return tuple(
            f"{w.workload.id}: {text}"
            for w in self.workloads
            if w.status == "differs"
            for text in w.differences
        )

    def infrastructure_problems(self) -> tuple[str, ...]:
        return tuple(w.describe() for w in self.workloads if w.infrastructure)

    def mode_notes(self) -> tuple[str, ...]:
        """A verdict note for every workload compared as sorted lines, saying why: what was
        compared is not the raw output, and the user reading the verdict must know it."""
        return tuple(
            f"workload {w.workload.id}: {note.rstrip('.')}."
            for w in self.workloads
            if w.mode == "sorted-lines" and not w.infrastructure
            for note in w.notes
        )

    def detail(self) -> tuple[str, ...]:
        """One line a workload, for `Evidence.behaviour_detail` and the ledger."""
        return tuple(w.describe() for w in self.workloads)

    def check_for(self, workload_id: str) -> ReferenceCheck:
        """The reference the timed lane checks every repetition of this workload against."""
        for judged in self.workloads:
            if judged.workload.id != workload_id:
                continue
            if judged.status != "match" or judged.reference is None:
                raise InfrastructureError(
                    f"workload {workload_id!r} did not pass the behaviour gate ({judged.status}); "
                    "it has no reference to measure against"
                )
            return ReferenceCheck(judged.reference, self.behaviour)
        raise InfrastructureError(f"no behaviour reference for workload {workload_id!r}")


@dataclass(frozen=True)
class _Run:
    result: ProcessResult
    outputs: tuple[OutputFile, ...]

    def observe(self, behaviour: Behaviour, mode: Mode) -> Observation:
        return observe(self.result, self.outputs, behaviour, mode)


def _run(invocation: Invocation, behaviour: Behaviour, sandbox: Sandbox, timeout_s: float) -> _Run:
    program = invocation.program
    clear_outputs(program, behaviour.output_files)
    result = run_invocation(invocation, sandbox=sandbox, timeout_s=timeout_s)
    return _Run(result, read_outputs(program, behaviour.output_files))


def _baseline_problem(run: _Run, workload: Workload, timeout_s: float) -> str | None:
    if run.result.timed_out:
        return f"the baseline timed out after {timeout_s:.3g} s"
    if run.result.exit_code != workload.expected_exit:
        tail = run.result.tail(300).strip()
        return (
            f"the baseline exits {run.result.exit_code}, the manifest expects "
            f"{workload.expected_exit}" + (f": {tail}" if tail else "")
        )
    return None


@dataclass(frozen=True)
class _Settled:
    mode: Mode
    reference: Observation
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


def _settle_mode(first: _Run, second: _Run, behaviour: Behaviour) -> _Settled:
    """Exact if the baseline reproduces itself, sorted-lines if only the order of lines moves."""
    exact = first.observe(behaviour, "exact")
    again = second.observe(behaviour, "exact")
    if exact.fingerprint == again.fingerprint:
        return _Settled("exact", exact)
    moved = describe_differences(exact, again, labels=_SELF)
    ordered = first.observe(behaviour, "sorted-lines")
    ordered_again = second.observe(behaviour, "sorted-lines")
    if ordered.fingerprint == ordered_again.fingerprint:
        note = (
            "the baseline's output differs between two runs of itself ("
            + "; ".join(moved)
            + ") but not once its lines are sorted, so it is compared as sorted lines"
        )
        return _Settled("sorted-lines", ordered, notes=(note,))
    still = describe_differences(ordered, ordered_again, labels=_SELF)
    problem = "the baseline is nondeterministic even with sorted lines: " + "; ".join(still)
    return _Settled("sorted-lines", ordered, problems=(problem, _HINT))


def _judge_candidate(
    settled: _Settled, run: _Run, workload: Workload, behaviour: Behaviour, timeout_s: float
) -> WorkloadBehaviour:
    reference = settled.reference
    seen = run.observe(behaviour, settled.mode)
    if run.result.timed_out:
        differences: tuple[str, ...] = (f"the candidate timed out after {timeout_s:.3g} s",)
    else:
        differences = describe_differences(reference, seen, expected_exit=workload.expected_exit)
    return WorkloadBehaviour(
        workload=workload,
        mode=settled.mode,
        status="differs" if differences else "match",
        differences=differences,
        baseline_reference=reference.fingerprint,
        candidate=seen.fingerprint,
        notes=settled.notes,
        reference=reference,
    )


def judge_workload(
    baseline: Invocation,
    candidate: Invocation,
    behaviour: Behaviour,
    *,
    sandbox: Sandbox,
    timeout_s: float,
    mode: Mode | None = None,
) -> WorkloadBehaviour:
    """Baseline twice, then the candidate once, on one workload.

    With `mode` (a twin, whose original has settled how its output compares), the baseline
    runs once: its second run would only settle the mode again.
    """
    workload = baseline.workload
    first = _run(baseline, behaviour, sandbox, timeout_s)
    problem = _baseline_problem(first, workload, timeout_s)
    if problem is not None:
        observed = first.observe(behaviour, "exact")
        return WorkloadBehaviour(
            workload, "exact", "baseline-failed", (problem,), observed.fingerprint, None
        )
    if mode is not None:
        settled = _Settled(mode, first.observe(behaviour, mode))
    else:
        settled = _settle_mode(first, _run(baseline, behaviour, sandbox, timeout_s), behaviour)
    if settled.problems:
        return WorkloadBehaviour(
            workload,
            settled.mode,
            "nondeterministic",
            settled.problems,
            settled.reference.fingerprint,
            None,
        )
    ran = _run(candidate, behaviour, sandbox, timeout_s)
    return _judge_candidate(settled, ran, workload, behaviour, timeout_s)


# Behaviour runs side by side: two, one a core of the 2-core machines this is built for.
BEHAVIOUR_WORKERS = 2

# (program, workload) -> the program as it must run that workload.
Visible = Callable[[Program, Workload], Program]


def as_built(program: Program, workload: Workload) -> Program:
    """The default `Visible`: every workload runs the program as it was built."""
    return program


def check_behaviour(
    baseline: Program,
    candidate: Program,
    workloads: Sequence[Workload],
    behaviour: Behaviour,
    *,
    prefix: Sequence[str],
    sandbox: Sandbox,
    timeout_for: Callable[[Workload], float],
    visible: Visible = as_built,
) -> BehaviourResult:
    """Judge the candidate's behaviour on every workload, whatever its tier.

    `visible` gives each side's program the folders one workload's inputs live in (a twin's
    copies, generated inputs, the holdout copy: `speedproof.judge.inputs.unseen`). A twin, which
    comes after its original, is compared in the mode its original settled."""
    settled: dict[str, Mode] = {}
    done: dict[str, WorkloadBehaviour] = {}

    def judge(workload: Workload) -> WorkloadBehaviour:
        return judge_workload(
            Invocation(visible(baseline, workload), workload, tuple(prefix)),
            Invocation(visible(candidate, workload), workload, tuple(prefix)),
            behaviour,
            sandbox=sandbox,
            timeout_s=timeout_for(workload),
            mode=settled.get(workload.id.removesuffix(TWIN_SUFFIX))
            if workload.id.endswith(TWIN_SUFFIX)
            else None,
        )

    # Two workloads at a time: nothing here is timed (a timeout is a limit, not a reading), and
    # on logstat's 4 workloads and their twins this halves the stage. Twins run after every
    # original, because each is compared in the mode its original settled.
    originals = [w for w in workloads if not w.id.endswith(TWIN_SUFFIX)]
    twins = [w for w in workloads if w.id.endswith(TWIN_SUFFIX)]
    with ThreadPoolExecutor(max_workers=BEHAVIOUR_WORKERS) as pool:
        for group in (originals, twins):
            for workload, result in zip(group, pool.map(judge, group), strict=True):
                done[workload.id] = result
                if result.matches:
                    settled[workload.id] = result.mode
    return BehaviourResult(tuple(done[w.id] for w in workloads), behaviour)
