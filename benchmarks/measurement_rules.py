"""speedproof's sequential rule against the anchor's fixed rules, on real timed pairs.

One bundled example (logstat by default) is laid out as a git repository and built from
separate checkouts: the base revision, a second checkout of it (A/A trials), and for each known
win a checkout slowed by `speedproof calibrate`'s injected busy wait, sized on the shortest
representative workload so that the untouched build is that many % faster there. Each trial
measures ONE stream of ABBA pairs per workload through `measure_pairs` (one warm-up a side, the
behaviour check on every run, a random environment size per run, bubblewrap), in rounds of 10
pairs, until every rule has read all it asks for (at most `--max-pairs`); `rule_evaluation`
applies the rules to prefixes of that same stream: (a) speedproof's sequential rule, the judge's
own `SequentialRule` with the manifest's schedule and time budget, (b) the anchor's 25(+25)
Welch rule, (c) a Mann-Whitney-only 25-pair rule, and (d) `verify`'s schedule (twice the
budget) on the 4 % wins (see that module). Trials of every kind are interleaved, so a drift of
the machine over the run lands on all of them alike.

Differences from a judge run, on purpose: the stream is measured in one go, round after round
with one warm-up at the start, and a contended round is not measured again; the trials that saw
a contended machine are counted instead. Only the timed lane is read (no binary size, no
instruction counts), and holdout workloads are not measured.

Every trial is appended to `--out` as one JSON line (its per-pair wall, CPU and peak memory);
a run given an existing `--out` resumes where it stopped, and `--from-file` evaluates a record
again without measuring. A table of the trials so far is printed every 10 trials. No
assertions: the figures are for docs/adr.

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/measurement_rules.py \
        [--example logstat|textstat] [--aa-trials 100] [--win-trials 30] [--wins 10,5,4,3] \
        [--max-pairs 400] [--workloads ID,ID] [--seed N] [--out FILE] [--from-file FILE]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rule_evaluation import (
    FIXED_PAIRS,
    TrialStream,
    decided,
    evaluate,
    markdown,
    predicted_acceptance,
    realized_wins,
    rules_for,
    stream_from_json,
)
from speedproof.calibration.inject import add_slowdown
from speedproof.calibration.sizing import Sizing, size_wins
from speedproof.examples import get_example, materialise
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.check import BehaviourResult, check_behaviour
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.measure.environment import describe_environment, measurement_contended
from speedproof.judge.measure.pinning import describe, timed_cpus
from speedproof.judge.measure.readings import TIMED_METRICS
from speedproof.judge.measure.replay import RecordedWorkload
from speedproof.judge.measure.runner import (
    PairSeries,
    Round,
    TimeoutRule,
    measure_pairs,
    private_network,
)
from speedproof.judge.measure.schedule import schedule_for
from speedproof.judge.worktree.trees import resolve_rev, worktree
from speedproof.manifest import Manifest, Policy, Workload
from speedproof.manifest_loading import load_manifest
from speedproof.stats import Schedule
from speedproof.stats.power import resolvable_win_pct

PARTIAL_EVERY = 10
# A trial is measured in rounds of this many pairs until every rule has what it asks for.
RECORD_ROUND = 10
# The full run the figures are planned for: 100 A/A trials and 30 trials of each of 3 wins.
FULL_TRIALS = 100 + 3 * 30


@dataclass(frozen=True)
class Planned:
    """One trial to measure: A/A, or a known win of `win_pct` %."""

    kind: str
    win_pct: float
    index: int

    @property
    def label(self) -> str:
        return "a/a" if self.kind == "a/a" else f"win {self.win_pct:g} %"

    @property
    def trial(self) -> str:
        return f"{self.label}#{self.index}"


def plan(aa_trials: int, win_trials: int, wins: Sequence[float]) -> list[Planned]:
    """Every trial, the kinds spread evenly over the run (trial i of n sits at (i + ½) / n)."""
    kinds = [("a/a", 0.0, aa_trials), *(("win", w, win_trials) for w in wins)]
    placed = [
        ((index + 0.5) / count, order, Planned(kind, win, index))
        for order, (kind, win, count) in enumerate(kinds)
        for index in range(count)
    ]
    return [p for _, _, p in sorted(placed, key=lambda item: (item[0], item[1]))]


# ----- builds -------------------------------------------------------------------------------


@dataclass
class Bench:
    """The built programs and behaviour references every trial measures with."""

    manifest: Manifest
    sandbox: Sandbox
    workloads: list[Workload]
    max_pairs: int
    seed: int | None
    cpus: frozenset[int] | None
    programs: dict[str, Program] = field(default_factory=dict)
    checks: dict[str, BehaviourResult] = field(default_factory=dict)

    def pair(self, planned: Planned) -> dict[Side, Program]:
        """A/A: base against its copy. A win: the slowed build against the untouched one."""
        if planned.kind == "a/a":
            base, cand = self.programs["base"], self.programs["copy"]
        else:
            base, cand = self.programs[planned.label], self.programs["base"]
        return {
            "baseline": replace(base, side="baseline"),
            "candidate": replace(cand, side="candidate"),
        }

    def check(self, planned: Planned) -> None:
        """The behaviour gate on the trial's two programs, once; its references serve every run."""
        if planned.label in self.checks:
            return
        pair = self.pair(planned)
        result = check_behaviour(
            pair["baseline"],
            pair["candidate"],
            self.workloads,
            self.manifest.behaviour,
            prefix=self.manifest.target.prefix,
            sandbox=self.sandbox,
            timeout_for=lambda w: w.timeout_s,
        )
        if not result.matches:
            raise InfrastructureError(
                f"the {planned.label} programs do not behave alike: {'; '.join(result.detail())}"
            )
        self.checks[planned.label] = result

    def measure(
        self, planned: Planned, number: int, enough: Callable[[TrialStream], bool]
    ) -> dict[str, Any]:
        """One trial, as one JSON-able record: rounds of pairs of every workload until `enough`
        says every rule has read all it asks for, or `max_pairs` pairs."""
        self.check(planned)
        pair = self.pair(planned)
        prefix = tuple(self.manifest.target.prefix)
        series: dict[str, PairSeries] = {}
        seconds: dict[str, float] = dict.fromkeys((w.id for w in self.workloads), 0.0)
        started = time.perf_counter()
        done = 0
        while done < self.max_pairs:
            step = min(RECORD_ROUND, self.max_pairs - done)
            for position, workload in enumerate(self.workloads):
                seed = None
                if self.seed is not None:
                    seed = self.seed * 1_000_003 + number * 101 + position + 7919 * done
                begun = time.perf_counter()
                more = measure_pairs(
                    Invocation(pair["baseline"], workload, prefix),
                    Invocation(pair["candidate"], workload, prefix),
                    pairs=step,
                    sandbox=self.sandbox,
                    check=self.checks[planned.label].check_for(workload.id),
                    timeout=TimeoutRule.from_manifest(self.manifest.policy, workload),
                    round_=Round(
                        first_pair=done, warmup=1 if done == 0 else 0, seed=seed, cpus=self.cpus
                    ),
                )
                seconds[workload.id] += time.perf_counter() - begun
                known = series.get(workload.id)
                series[workload.id] = more if known is None else known.extend(more)
            done += step
            if any(not s.clean for s in series.values()):
                break
            if enough(_trial_stream(planned, series)):
                break
        private = private_network(self.sandbox, pair["baseline"])
        entries = {wid: _entry(found, seconds[wid], private) for wid, found in series.items()}
        return {
            "type": "trial",
            "trial": planned.trial,
            "kind": planned.kind,
            "win_pct": planned.win_pct,
            "index": planned.index,
            "seconds": time.perf_counter() - started,
            "workloads": entries,
        }


def _trial_stream(planned: Planned, series: dict[str, PairSeries]) -> TrialStream:
    workloads = tuple(
        RecordedWorkload(
            wid,
            {m: found.values("baseline", m) for m in TIMED_METRICS},
            {m: found.values("candidate", m) for m in TIMED_METRICS},
        )
        for wid, found in series.items()
    )
    return TrialStream(planned.trial, planned.kind, planned.win_pct, workloads)


def _entry(series: PairSeries, seconds: float, private: bool) -> dict[str, Any]:
    problems = [m.describe() for m in series.mismatches]
    problems += [f.message for f in series.failures]
    contended = any(
        measurement_contended(
            window.before, window.after, series.cpu_per_wall, private_network=private
        )
        for window in series.loads
    )
    return {
        side: {m: series.values(side, m) for m in TIMED_METRICS}
        for side in ("baseline", "candidate")
    } | {
        "load_before": series.loads[0].before.one,
        "load_after": series.loads[-1].after.one,
        "contended": contended,
        "problems": problems,
        "seconds": seconds,
    }


def with_timed_cpus(manifest: Manifest, setting: str | None) -> Manifest:
    """The manifest with `[policy] timed_cpus` replaced by `setting` ("all" or a count)."""
    if setting is None:
        return manifest
    value: object = "all" if setting == "all" else int(setting)
    # Validated as the manifest's own value would be: a count below 1 is refused by name.
    policy = Policy.model_validate({**manifest.policy.model_dump(), "timed_cpus": value})
    return manifest.model_copy(update={"policy": policy})


def _built(manifest: Manifest, sandbox: Sandbox, tree: Tree) -> Program:
    result = toolchain_for(manifest, sandbox).build(tree)
    if not result.ok or result.program is None:
        raise InfrastructureError(f"{tree.root} does not build:\n{result.log[-2000:]}")
    return result.program


@contextmanager
def prepared(
    args: argparse.Namespace, setup: dict[str, Any] | None
) -> Iterator[tuple[Bench, dict[str, Any]]]:
    """Checkouts, builds and slowdowns; `setup` (a resumed record's) fixes the slowdowns."""
    wins = _wins(args.wins)
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="speedproof-mr-")))
        repo = materialise(get_example(args.example), scratch)
        manifest = with_timed_cpus(load_manifest(repo).manifest, args.timed_cpus)
        sandbox = make_sandbox()
        bench = Bench(
            manifest,
            sandbox,
            chosen(manifest, args.workloads),
            args.max_pairs,
            args.seed,
            timed_cpus(manifest.policy.timed_cpus),
        )
        ids = [w.id for w in bench.workloads]
        if setup is not None and setup["workloads"] != ids:
            raise SystemExit(
                f"{args.out} was recorded on workloads {setup['workloads']}; this run asks for "
                f"{ids}: give another --out"
            )
        rev = resolve_rev(repo, "HEAD")
        trees: dict[str, Tree] = {}
        for name in ("base", "copy", "probe", *(f"win {w:g} %" for w in wins)):
            top = stack.enter_context(worktree(repo, rev)).path
            side: Side = "candidate" if name == "copy" else "baseline"
            trees[name] = Tree(side, top, top, scratch / "out" / name.replace(" ", "-"))
        print(f"building {len(trees)} checkouts of {args.example}", flush=True)
        for name in ("base", "copy"):
            bench.programs[name] = _built(manifest, sandbox, trees[name])
        if setup is None:
            toolchain = toolchain_for(manifest, sandbox)
            sizing = size_wins(
                manifest,
                sandbox,
                toolchain,
                bench.programs["base"],
                trees["probe"],
                wins,
                bench.cpus,
            )
            setup = _setup(args, bench, sizing)
        for win in wins:
            label = f"win {win:g} %"
            add_slowdown(manifest, trees[label].root, int(setup["iterations"][f"{win:g}"]))
            bench.programs[label] = _built(manifest, sandbox, trees[label])
        yield bench, setup


def _setup(args: argparse.Namespace, bench: Bench, sizing: Sizing) -> dict[str, Any]:
    return {
        "type": "setup",
        "example": args.example,
        "workloads": [w.id for w in bench.workloads],
        "max_pairs": args.max_pairs,
        "sizing": sizing.to_json(),
        "iterations": {f"{w:g}": n for w, n in sizing.iterations.items()},
        "command": command_line(),
        "machine": describe_environment().as_dict(),
        "timed_cpus": describe(bench.cpus),
    }


def chosen(manifest: Manifest, names: str | None) -> list[Workload]:
    """The representative workloads to measure: all of them, or the named ones."""
    representative = [w for w in manifest.workloads if w.tier == "representative"]
    if names is None:
        return representative
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {w.id for w in representative}
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        raise SystemExit(
            f"--workloads must name representative workloads ({', '.join(sorted(known))}); "
            f"got {names!r}"
        )
    return [w for w in representative if w.id in wanted]


def _wins(text: str) -> list[float]:
    try:
        wins = [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise SystemExit(f"--wins must be a comma-separated list of percentages: {exc}") from exc
    if any(not 0.0 < w < 100.0 for w in wins):
        raise SystemExit(f"every win must lie strictly between 0 and 100 %, got {text!r}")
    return wins


# ----- the record ---------------------------------------------------------------------------


def command_line() -> str:
    return shlex.join([sys.executable, *sys.argv])


def read_record(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The setup line and the trial lines of a record (a missing file is an empty record)."""
    if not path.exists():
        return None, []
    setup: dict[str, Any] | None = None
    trials: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{number}: not a JSON line: {exc}") from exc
        if data.get("type") == "setup":
            setup = data
        elif data.get("type") == "trial":
            trials.append(data)
        else:
            raise SystemExit(f"{path}:{number}: neither a setup nor a trial line")
    return setup, trials


def append(path: Path | None, data: dict[str, Any]) -> None:
    if path is None:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(data) + "\n")


def check_resumable(setup: dict[str, Any], args: argparse.Namespace) -> None:
    """A record is resumed only by a run that measures the same thing."""
    wanted = {
        "example": args.example,
        "max_pairs": args.max_pairs,
    }
    for key, value in wanted.items():
        if setup.get(key) != value:
            raise SystemExit(
                f"{args.out} was recorded with {key}={setup.get(key)!r}; this run asks for "
                f"{value!r}: give another --out"
            )
    missing = [f"{w:g}" for w in _wins(args.wins) if f"{w:g}" not in setup["iterations"]]
    if missing:
        raise SystemExit(f"{args.out} has no slowdown for win(s) {', '.join(missing)} %")


# ----- printing -----------------------------------------------------------------------------


def report(lines: Sequence[dict[str, Any]], manifest: Manifest, max_pairs: int, title: str) -> None:
    """The rules table of the clean trials in `lines`, and what kept the others out."""
    clean = [t for t in lines if not any(e["problems"] for e in t["workloads"].values())]
    streams = [stream_from_json(t) for t in clean]
    print(f"\n{title}: {len(streams)} trial(s)\n", flush=True)
    if not streams:
        return
    schedule = schedule_for(manifest)
    rules = rules_for(manifest)
    table = evaluate(streams, manifest, rules)
    print("\n".join(markdown(table, relative_to=list(rules)[1])))
    realized = ", ".join(f"{k} {v:+.1f} %" for k, v in realized_wins(streams).items())
    print(f"\nchange the trials measured (median over trials of the median pair ratio): {realized}")
    _predicted(streams, schedule)
    _contention(streams)
    for trial in lines:
        if trial not in clean:
            problems = [p for e in trial["workloads"].values() for p in e["problems"]]
            print(f"left out: {trial['trial']}: {'; '.join(problems)}")
    print(flush=True)


def _predicted(streams: Sequence[TrialStream], schedule: Schedule) -> None:
    """What calibrate's noise estimate (stats.power) says of these trials, beside the table."""
    sd, predicted = predicted_acceptance(streams, schedule)
    if not predicted:
        return
    print(
        f"A/A noise: median winsorized sd {sd * 100:.1f} % per pair; the last look resolves "
        f"{resolvable_win_pct(sd, schedule, workloads=len(streams[0].workloads)):.1f} % wins "
        "9 in 10 (stats.power)"
    )
    shown = ", ".join(f"{k} ({c:+.1f} %) {p * 100:.0f} %" for k, (c, p) in predicted.items())
    print(f"predicted acceptance at that noise: {shown}")


def _contention(streams: Sequence[TrialStream]) -> None:
    labels = list(dict.fromkeys(s.label for s in streams))
    counts = [
        f"{label} {sum(s.contended for s in streams if s.label == label)}/"
        f"{sum(s.label == label for s in streams)}"
        for label in labels
    ]
    print(f"\ntrials that saw a contended machine (load rule of measure.environment): {counts}")


def machine(prefix: str) -> None:
    env = describe_environment()
    print(
        f"{prefix}: cpu {env.cpu_model!r}, cores {env.cores}/{env.online_cores}, governor "
        f"{env.governor}, {env.kernel}, load {env.load.one:.2f} {env.load.five:.2f} "
        f"{env.load.fifteen:.2f}",
        flush=True,
    )


def timings(lines: Sequence[dict[str, Any]], measured_now: int, seconds: float) -> None:
    """Seconds per trial and per workload, and what the planned full run would take."""
    if not lines:
        return
    per_trial = statistics.fmean(t["seconds"] for t in lines)
    workloads = lines[0]["workloads"]
    each = {w: statistics.fmean(t["workloads"][w]["seconds"] for t in lines) for w in workloads}
    shown = ", ".join(f"{w} {s:.1f} s" for w, s in each.items())
    print(f"measured {measured_now} trial(s) in {seconds:.0f} s this run")
    print(f"mean per trial {per_trial:.1f} s ({shown})")
    hours = FULL_TRIALS * per_trial / 3600.0
    print(f"the full run ({FULL_TRIALS} trials) at this pace: {hours:.1f} h for these workloads")


# ----- main ---------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", choices=("logstat", "textstat"), default="logstat")
    parser.add_argument("--aa-trials", type=int, default=100)
    parser.add_argument("--win-trials", type=int, default=30)
    parser.add_argument("--wins", default="10,5,4,3", help="known wins in %%, comma-separated")
    parser.add_argument("--max-pairs", type=int, default=400, help="most pairs per stream")
    parser.add_argument("--workloads", default=None, help="representative workload ids")
    parser.add_argument("--seed", type=int, default=None, help="seed of the environment sizes")
    parser.add_argument("--out", type=Path, default=None, help="JSON-lines record (resumable)")
    parser.add_argument("--from-file", type=Path, default=None, help="evaluate a record only")
    parser.add_argument(
        "--timed-cpus",
        default=None,
        help='pin the timed runs to this many CPUs, or "all"; default: the manifest\'s setting',
    )
    args = parser.parse_args()
    if args.max_pairs < 2 * FIXED_PAIRS:
        parser.error(f"--max-pairs must be at least {2 * FIXED_PAIRS}: rule (b) may read that many")
    if min(args.aa_trials, args.win_trials) < 0:
        parser.error("trial counts cannot be negative")
    return args


def from_file(path: Path) -> None:
    setup, trials = read_record(path)
    if setup is None:
        raise SystemExit(f"{path} has no setup line")
    manifest = load_manifest(get_example(setup["example"]).folder).manifest
    print(f"recorded with: {setup['command']}")
    print(f"recorded on: {setup['machine']}")
    report(trials, manifest, int(setup["max_pairs"]), f"rules on the record {path}")


def measure_all(args: argparse.Namespace) -> None:
    setup, done = read_record(args.out) if args.out is not None else (None, [])
    if setup is not None:
        check_resumable(setup, args)
    started = time.perf_counter()
    planned = plan(args.aa_trials, args.win_trials, _wins(args.wins))
    recorded = {t["trial"] for t in done}
    with prepared(args, setup) as (bench, setup):
        if not recorded:
            append(args.out, setup)
        print(f"sizing of the injected wins: {setup['sizing']}", flush=True)
        lines = [t for t in done if t["trial"] in {p.trial for p in planned}]
        todo = [p for p in planned if p.trial not in recorded]
        print(f"{len(lines)} trial(s) already recorded, {len(todo)} to measure", flush=True)
        rules = rules_for(bench.manifest)
        for number, trial in enumerate(todo, start=1):
            line = bench.measure(
                trial, len(lines) + number, lambda found: decided(found, bench.manifest, rules)
            )
            append(args.out, line)
            lines.append(line)
            loads = [(e["load_before"], e["load_after"]) for e in line["workloads"].values()]
            print(f"[{number}/{len(todo)}] {trial.trial}: {line['seconds']:.1f} s, load {loads}")
            if number % PARTIAL_EVERY == 0 and number < len(todo):
                report(lines, bench.manifest, args.max_pairs, f"partial, after {number}")
        report(lines, bench.manifest, args.max_pairs, "all trials")
        timings(lines, len(todo), time.perf_counter() - started)


def main() -> None:
    args = parse_args()
    print(f"command: {command_line()}")
    if args.from_file is not None:
        from_file(args.from_file)
        return
    if args.out is None:
        print("no --out: the streams are kept in memory only and lost when the run stops")
    machine("before")
    measure_all(args)
    machine("after")


if __name__ == "__main__":
    main()
