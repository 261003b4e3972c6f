"""The instruction-count lane: Cachegrind's `Ir` of a workload run, for baseline and candidate.

Each side of a workload runs `repeats` times under Cachegrind
(`speedproof.judge.measure.cachegrind`), in the same bubblewrap sandbox as the timed lane, with
address randomisation off and the environment below. A count is a deterministic reading: when every
run of a side gives the same number, one number is the whole truth and the comparison is `exact`.
When two runs of the same binary differ (Go: 0.16-0.19 % between runs, docs/adr/0021), the side is
counted `STATISTICAL_RUNS` times and the two sides are compared as samples, by Welch's t at the
manifest's alpha (`statistical_comparison`, docs/adr/0044); a change must also clear the lane's
noise floor. Fewer counts than that, or a run without a count, and the reading supports
nothing. See docs/adr/0021-instruction-lane.md.

Every run is also a behaviour check: with `check` given, the program's stdout, stderr, exit
code and output files under valgrind must match the behaviour gate's reference, and a run that
does not is an error in the reading, not a count; the differences are kept (`behaviour`), and
on the candidate they reject it like any behaviour change (`speedproof.judge.measure.refusals`). On
the baseline such a run is a fault of the baseline, not the candidate's: the judge stops with an
infrastructure error (`baseline_fault`). Valgrind's own messages go to a log file a process in
the run's folder, so the program's stderr stays the program's.

The count is the sum over every process of the run (`--trace-children=yes`, one output file a
process): a target that is a shell script starting its worker is counted whole. A process that
started and wrote no count (killed by a signal, or still running when the sandbox's PID namespace
died) makes the run's count a part of the work: the run has no count, and the processes are
named (`escaped`, `speedproof.judge.measure.escapes`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult, run_process
from speedproof.ground.program import Side
from speedproof.ground.sandbox import Sandbox
from speedproof.judge.measure.cachegrind import (
    MeasurementError,
    cachegrind_prefix,
    locate_cachegrind,
)
from speedproof.judge.measure.escapes import discarded, discarded_beyond, escaped, process_counts
from speedproof.judge.measure.opens import FolderOpens
from speedproof.judge.measure.runner import RepetitionCheck
from speedproof.judge.policy.evidence import Comparison, exact_comparison
from speedproof.stats import ALPHA, welch_compare

# Measured slowdown under Cachegrind (--cache-sim=no) against a native run: 18-28x for the
# bundled examples on an idle machine (Go logstat 0.043 s → 0.85 s, Python textstat 0.22 s →
# 4.9 s), up to 68x at load average 5, which stretches wall time. The floor covers runs whose
# native time is a few milliseconds, where valgrind's own start-up (about a second) dominates.
RECOMMENDED_SLOWDOWN = 60.0
TIMEOUT_FLOOR_S = 60.0

# A change in an exact count smaller than this is not called significant. Counts that repeat
# exactly still move with things no patch is about: Go's between-run spread under the lane's
# settings is 0.16-0.19 % (ADR 0021), a comment-only change read +0.17 % on a representative
# workload, and the worktree's path moves CPython's counts by 3e-6. 0.5 % is 2.5x the largest
# of these, and a sixth of the default 3 % accept floor and a quarter of the default 2 % limit,
# so no verdict under the default policy changes; a manifest limit below it stops rejecting on
# instruction readings the lane cannot tell from noise.
INSTRUCTION_NOISE_FLOOR_PCT = 0.5

# Set for every counted run. Each is read only by its own runtime, so one set serves every
# target; the reading records the ones it set or changed.
# - PYTHONHASHSEED: str and bytes hashes, hence set and dict layouts and iteration orders, are
#   seeded at random per process otherwise; with a fixed seed CPython's counts repeat exactly.
#   A number the program already sets is kept (the behaviour reference was taken with it).
# - GOMAXPROCS=1: valgrind runs one thread at a time, so Go's parallelism is fictional under it,
#   while idle Ps spin looking for work for as long as the running thread holds valgrind's lock;
#   with the default, runs of logstat's shop-day counted 289 M, 309 M, 583 M and once 2.5 G.
# - GODEBUG asyncpreemptoff=1: no timer-driven SIGURG preemption (wall-clock dependent signals).
# - GODEBUG gcstoptheworld=1: the collector still does all its work, but at once instead of
#   interleaved on wall-clock slices; spread across runs fell from 1.8-9 % to 0.16-0.19 %.
# Go's counts still differ between runs (see the ADR); the lane then reports itself unstable.
_SEEDS = {"PYTHONHASHSEED": "0", "GOMAXPROCS": "1"}
_GODEBUG = ("asyncpreemptoff=1", "gcstoptheworld=1")
_LOG_LIMIT = 400


# Counts a side needs when its runs differ: Welch's t needs 4 a side (`stats.MIN_SAMPLES`). On
# logstat a run costs about 0.9 s under Cachegrind on an idle machine, so 4 a side on two
# workloads is about 15 s, paid only by targets whose counts vary (Go).
STATISTICAL_RUNS = 4


def instruction_timeout(
    native_wall_s: float,
    *,
    multiple: float = RECOMMENDED_SLOWDOWN,
    floor_s: float = TIMEOUT_FLOOR_S,
) -> float:
    """A per-run limit for a counted run: max(floor, multiple × the native run's wall time)."""
    return max(floor_s, multiple * native_wall_s)


def counting_env(env: Mapping[str, str]) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """The environment of a counted run, and the (name, value) pairs the lane set or changed."""
    result = dict(env)
    for name, value in _SEEDS.items():
        if name == "PYTHONHASHSEED" and result.get(name, "").isdigit():
            continue
        result[name] = value
    godebug = [part for part in result.get("GODEBUG", "").split(",") if part]
    result["GODEBUG"] = ",".join([*godebug, *_GODEBUG])
    changed = tuple(
        (name, value) for name, value in sorted(result.items()) if env.get(name) != value
    )
    return result, changed


@dataclass(frozen=True)
class InstructionRun:
    """One run under Cachegrind: its count, or the words saying why there is none."""

    ir: int | None
    exit_code: int
    stdout_sha256: str
    error: str | None
    wall_s: float = 0.0
    # How the run's output differed from the behaviour gate's reference, when it did.
    behaviour: tuple[str, ...] = ()
    # One reason a process of the run that started and wrote no count (`escapes.escaped`).
    escaped: tuple[str, ...] = ()
    # The command line that replaced each program whose count `exec` discarded
    # (`escapes.discarded`); the candidate's may be no more than the baseline's.
    replaced: tuple[str, ...] = ()


@dataclass(frozen=True)
class InstructionReading:
    """Every counted run of one side on one workload, and the environment they ran with."""

    workload: str
    side: Side
    runs: tuple[InstructionRun, ...]
    # The variables the lane set or changed for these runs (see `counting_env`).
    env: tuple[tuple[str, str], ...] = ()
    # `valgrind --version`, e.g. "valgrind-3.19.0": counts are only comparable under one.
    tool: str = ""

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(run.ir for run in self.runs if run.ir is not None)

    @property
    def stable(self) -> bool:
        """At least two runs, every one produced a count, and all counts are identical."""
        return (
            len(self.runs) >= 2
            and len(self.counts) == len(self.runs)
            and len(set(self.counts)) == 1
        )

    @property
    def counted(self) -> bool:
        """Every run produced a count and all counts are identical (one run is enough here)."""
        return bool(self.runs) and len(self.counts) == len(self.runs) and len(set(self.counts)) == 1

    @property
    def ir(self) -> int | None:
        return self.counts[0] if self.stable else None

    @property
    def spread_pct(self) -> float | None:
        """(largest - smallest) / smallest × 100 over the counts there are; None without two."""
        counts = self.counts
        if len(counts) < 2 or min(counts) <= 0:
            return None
        return (max(counts) - min(counts)) / min(counts) * 100.0

    @property
    def note(self) -> str:
        """Why the reading is not stable, in words; empty when it is."""
        if self.stable:
            return ""
        failed = [
            f"run {index} of {len(self.runs)} failed: {run.error or 'no count'}"
            for index, run in enumerate(self.runs, 1)
            if run.ir is None
        ]
        if failed:
            return "; ".join(failed)
        if len(self.runs) < 2:
            return f"{len(self.runs)} run: one count cannot show that counts repeat"
        low, high = min(self.counts), max(self.counts)
        spread = self.spread_pct
        by = "" if spread is None else f" ({spread:.3g} %)"
        return f"counts varied across {len(self.runs)} runs: {low:,} to {high:,}{by}"


def _log_tail(folder: Path) -> str:
    text = ""
    for path in sorted(folder.glob("valgrind.*.log")):
        text += path.read_text(encoding="utf-8", errors="replace")
    return text.strip()[-_LOG_LIMIT:]


def _exit_words(result: ProcessResult, invocation: Invocation) -> tuple[str, ...]:
    expected = invocation.workload.expected_exit
    if result.exit_code == expected:
        return ()
    tail = result.tail(_LOG_LIMIT).strip()
    return (f"exit status {result.exit_code}, the workload expects {expected}: {tail}".strip(),)


@dataclass(frozen=True)
class _Classified:
    ir: int | None = None
    error: str | None = None
    behaviour: tuple[str, ...] = ()
    escaped: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()


def _classify(
    result: ProcessResult,
    invocation: Invocation,
    check: RepetitionCheck | None,
    folder: Path,
    timeout_s: float,
    opens: FolderOpens,
) -> _Classified:
    """The run's count, or why there is none; valgrind's failures come first, so a program that
    never started is not reported as a behaviour change, then processes that escaped counting,
    then the behaviour check."""
    if result.timed_out:
        return _Classified(error=f"timed out after {timeout_s:.3g} s under Cachegrind")
    if not list(folder.glob("cachegrind.*.out")):
        said = _log_tail(folder) or result.tail(_LOG_LIMIT).strip()
        return _Classified(
            error=f"Cachegrind wrote no count (exit status {result.exit_code}): {said}"
        )
    try:
        counts = process_counts(folder, opens.opens())
    except MeasurementError as exc:
        return _Classified(error=str(exc))
    replaced = discarded(counts, invocation.program.root)
    hidden = escaped(counts)
    if hidden:
        return _Classified(error="; ".join(hidden), escaped=hidden)
    if check is not None:
        differences = check.differences(invocation, result)
    else:
        differences = _exit_words(result, invocation)
    if differences:
        error = "behaviour under Cachegrind differs: " + "; ".join(differences)
        return _Classified(error=error, behaviour=differences, replaced=replaced)
    return _Classified(ir=sum(count.ir or 0 for count in counts), replaced=replaced)


def _count_once(
    invocation: Invocation,
    *,
    sandbox: Sandbox,
    timeout_s: float,
    check: RepetitionCheck | None,
    env: Mapping[str, str],
    tools: tuple[str, str],
) -> InstructionRun:
    """One run in a fresh folder, bound writable: /tmp is private inside the sandbox."""
    program = invocation.program
    with tempfile.TemporaryDirectory(prefix="speedproof-cachegrind-") as raw:
        folder = Path(raw)
        prefix = cachegrind_prefix(
            str(folder / "cachegrind.%p.out"),
            log_file=str(folder / "valgrind.%p.log"),
            trace_children=True,
            setarch=tools[0],
            valgrind=tools[1],
        )
        spec = replace(program.spec(), writable=(*program.writable, folder), env=dict(env))
        if check is not None:
            check.prepare(invocation)
        with FolderOpens(folder) as opens:
            result = run_process(
                (*prefix, *invocation.argv),
                cwd=program.root,
                sandbox=sandbox,
                spec=spec,
                timeout_s=timeout_s,
                stdin=invocation.stdin,
            )
            found = _classify(result, invocation, check, folder, timeout_s, opens)
    return InstructionRun(
        found.ir,
        result.exit_code,
        result.stdout_sha256,
        found.error,
        result.wall_s,
        behaviour=found.behaviour,
        escaped=found.escaped,
        replaced=found.replaced,
    )


def count_instructions(
    invocation: Invocation,
    *,
    sandbox: Sandbox,
    timeout_s: float,
    repeats: int = 2,
    check: RepetitionCheck | None = None,
) -> InstructionReading:
    """Count one side on one workload `repeats` times, one run after another.

    `timeout_s` is per run and already scaled for valgrind (`instruction_timeout`). The runs
    stop at the first one that fails or differs from the count before it: the reading is
    Raises CachegrindUnavailable when valgrind or setarch is missing.

    The runs stop at the first one that fails. When a count differs from the first, the side
    is counted at least `STATISTICAL_RUNS` times, so the comparison can be a test on samples.
    """
    if repeats < 1:
        raise ValueError(f"need at least one run, got {repeats}")
    setarch, valgrind, version = locate_cachegrind()
    env, changed = counting_env(invocation.program.env)
    runs: list[InstructionRun] = []
    wanted = repeats
    while len(runs) < wanted:
        run = _count_once(
            invocation,
            sandbox=sandbox,
            timeout_s=timeout_s,
            check=check,
            env=env,
            tools=(setarch, valgrind),
        )
        runs.append(run)
        if run.ir is None:
            break
        if run.ir != runs[0].ir:
            wanted = max(wanted, STATISTICAL_RUNS)
    return InstructionReading(
        workload=invocation.workload.id,
        side=invocation.program.side,
        runs=tuple(runs),
        env=changed,
        tool=version,
    )


def baseline_fault(reading: InstructionReading) -> str | None:
    """What a baseline run under Cachegrind did wrong, in words; None for a candidate's reading
    and for a baseline whose every run counted.

    A run without a count timed out, crashed, differed from the behaviour gate's reference or
    left Cachegrind nothing to read: none of it is the candidate's doing. Counts that differ
    between runs are not a fault but an unstable reading, which the comparison reports.
    """
    if reading.side != "baseline":
        return None
    for index, run in enumerate(reading.runs, 1):
        if run.ir is None:
            return f"baseline run {index} under Cachegrind failed: {run.error or 'no count'}"
    return None


def exec_escapes(baseline: InstructionReading, candidate: InstructionReading) -> tuple[str, ...]:
    """Programs of a candidate's run whose count `exec` discarded, beyond the baseline's first
    run's on the same workload: a count the candidate hid, one reason each."""
    reference = baseline.runs[0].replaced if baseline.runs else ()
    for run in candidate.runs:
        extra = discarded_beyond(reference, run.replaced)
        if extra:
            return extra
    return ()


def _mean(reading: InstructionReading) -> float:
    counts = reading.counts
    return sum(counts) / len(counts) if counts else float("nan")


def _unsupported(
    baseline: InstructionReading, candidate: InstructionReading, tier: str, note: str
) -> Comparison:
    nan = float("nan")
    return replace(
        _reading(baseline, candidate, tier, _mean(baseline), _mean(candidate)),
        delta_pct=nan,
        ci_low_pct=nan,
        ci_high_pct=nan,
        significant=False,
        supported=False,
        exact=False,
        note=note,
    )


def _reading(
    baseline: InstructionReading,
    candidate: InstructionReading,
    tier: str,
    base: float,
    cand: float,
) -> Comparison:
    return exact_comparison(
        workload=baseline.workload,
        metric="instructions",
        tier=tier,
        lane="instructions",
        baseline=base,
        candidate=cand,
        n_baseline=len(baseline.runs),
        n_candidate=len(candidate.runs),
        extra=_spreads(baseline, candidate),
    )


def _spreads(
    baseline: InstructionReading, candidate: InstructionReading
) -> tuple[tuple[str, float | None], ...]:
    return (
        ("baseline_spread_pct", baseline.spread_pct),
        ("candidate_spread_pct", candidate.spread_pct),
    )


def sampled(reading: InstructionReading) -> bool:
    """Every run counted, and enough of them to be compared as a sample."""
    return len(reading.counts) == len(reading.runs) >= STATISTICAL_RUNS


def noise_floor_pct(baseline: InstructionReading, candidate: InstructionReading) -> float:
    """The smallest change counts that vary can show: the lane's floor, or the wider of the two
    sides' ranges when that is larger.

    Four counts a side are too few for Welch's t to see a shift that hits one side's runs and
    not the other's: on one busy core the same logstat binary counted 0.35 % apart on one side
    and 0.96 % on the other, and read as a significant change of under 1 %. A change no larger
    than what one side's own runs spread over is not told from noise.
    """
    spreads = [s for s in (baseline.spread_pct, candidate.spread_pct) if s is not None]
    return max([INSTRUCTION_NOISE_FLOOR_PCT, *spreads])


def statistical_comparison(
    baseline: InstructionReading, candidate: InstructionReading, *, tier: str, alpha: float
) -> Comparison:
    """Counts that vary between runs, compared as two samples by Welch's t at `alpha`; a
    change is significant only beyond the lane's noise floor as well."""
    found = welch_compare(
        [float(c) for c in baseline.counts],
        [float(c) for c in candidate.counts],
        workload=baseline.workload,
        metric="instructions",
        tier=tier,
        limit_pct=INSTRUCTION_NOISE_FLOOR_PCT,
        lane="instructions",
        alpha=alpha,
    )
    spreads = ", ".join(
        f"{side} {reading.spread_pct:.3g} %"
        for side, reading in (("baseline", baseline), ("candidate", candidate))
        if reading.spread_pct is not None
    )
    note = (
        f"counts vary between runs ({spreads} over {len(baseline.counts)} and "
        f"{len(candidate.counts)} runs): compared as samples by Welch's t"
    )
    floor = noise_floor_pct(baseline, candidate)
    if found.significant and abs(found.delta_pct) < floor:
        note += f"; {found.delta_pct:+.2f}% is inside the {floor:.3g}% floor"
        return replace(
            found,
            significant=False,
            note=note,
            extra=(*found.extra, *_spreads(baseline, candidate)),
        )
    return replace(found, note=note, extra=(*found.extra, *_spreads(baseline, candidate)))


def instruction_comparison(
    baseline: InstructionReading,
    candidate: InstructionReading,
    *,
    tier: str,
    alpha: float = ALPHA,
) -> Comparison:
    """Baseline against candidate on one workload: exact when both sides repeated exactly.

    Exact counts carry no sampling noise, so the comparison is `supported` always, as binary
    size is (`size_comparison`), and `significant` when the counts differ by at least
    `INSTRUCTION_NOISE_FLOOR_PCT`. When either side is
    unstable there is no figure to stand on: NaN delta, not significant, not supported, and a
    note naming the side that varied and by how much.
    """
    if baseline.side != "baseline" or candidate.side != "candidate":
        raise ValueError(
            f"expected a baseline and a candidate, got {baseline.side}, {candidate.side}"
        )
    if baseline.workload != candidate.workload:
        raise ValueError(f"cannot compare {baseline.workload!r} with {candidate.workload!r}")
    hidden = exec_escapes(baseline, candidate)
    if hidden:
        return _unsupported(baseline, candidate, tier, "candidate " + "; ".join(hidden))
    # A candidate counted once is enough when the baseline has shown, by repeating, that this
    # target counts deterministically under the lane's settings (the judge runs a candidate
    # once when the lane is a secondary reading; judge.instruction_lane.repeats).
    if sampled(baseline) and sampled(candidate) and not (baseline.stable and candidate.stable):
        return statistical_comparison(baseline, candidate, tier=tier, alpha=alpha)
    unstable = [f"baseline {baseline.note}"] if not baseline.stable else []
    single = len(candidate.runs) == 1 and candidate.counted
    if not (candidate.stable or single):
        unstable.append(f"candidate {candidate.note}")
    if unstable:
        return _unsupported(baseline, candidate, tier, "; ".join(unstable))
    base, cand = baseline.counts[0], candidate.counts[0]
    if base <= 0:
        note = f"the baseline counted {base} instructions, so no relative change exists"
        return _unsupported(baseline, candidate, tier, note)
    found = _reading(baseline, candidate, tier, float(base), float(cand))
    if found.significant and abs(found.delta_pct) < INSTRUCTION_NOISE_FLOOR_PCT:
        note = (
            f"{found.delta_pct:+.2f}% is inside the lane's {INSTRUCTION_NOISE_FLOOR_PCT:g}% "
            "noise floor, so not significant"
        )
        return replace(found, significant=False, note=note)
    return found
