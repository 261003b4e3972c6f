"""The timed lane, with real target scripts run under the real bubblewrap sandbox.

No assertion here is about how long anything took: order, counts, errors and peak memory only.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.judge.behaviour.check import ReferenceCheck, check_behaviour
from speedproof.judge.behaviour.fingerprints import Fingerprint, Observation
from speedproof.judge.measure.environment import LoadSnapshot
from speedproof.judge.measure.runner import (
    PairSeries,
    Sample,
    TimeoutRule,
    measure_pairs,
    pair_timeout,
    private_network,
)
from speedproof.manifest import Behaviour, Policy, Workload

WORKLOAD = Workload(id="w")
GENEROUS = TimeoutRule(floor_s=30.0, multiple=2.0, warmup_s=30.0)

# Every run appends its side to a log beside the two target folders, and counts its own runs in
# its target folder, so a test can read back the order and make run N behave differently.
PRELUDE = """
import sys
from pathlib import Path
SIDE = Path.cwd().name
with open(Path.cwd().parent / "order.log", "a") as log:
    log.write(SIDE[0].upper())
counter = Path("runs")
RUN = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(RUN))
"""


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def _program(tmp_path: Path, side: Side, body: str) -> Program:
    root = tmp_path / side
    root.mkdir(parents=True, exist_ok=True)
    script = root / "prog.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    return Program(
        side=side,
        root=root,
        argv=("python3", str(script)),
        env=build_env([]),
        writable=(tmp_path,),
    )


class _Always:
    """A check that accepts every run, for tests about order and accounting alone."""

    def prepare(self, invocation: Invocation) -> None:
        return None

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]:
        return ()


def _measure(
    tmp_path: Path,
    sandbox: Sandbox,
    baseline_body: str,
    candidate_body: str,
    *,
    pairs: int = 4,
    warmup: int = 1,
    timeout: TimeoutRule = GENEROUS,
    behaviour: Behaviour | None = None,
) -> PairSeries:
    """The behaviour gate first (as the judge does), then the timed lane with its reference."""
    baseline = _program(tmp_path, "baseline", baseline_body)
    candidate = _program(tmp_path, "candidate", candidate_body)
    behaviour = behaviour or Behaviour()
    gate = check_behaviour(
        baseline,
        candidate,
        [WORKLOAD],
        behaviour,
        prefix=(),
        sandbox=sandbox,
        timeout_for=lambda w: w.timeout_s,
    )
    assert gate.matches, gate.detail()
    (tmp_path / "order.log").write_text("")
    return measure_pairs(
        Invocation(baseline, WORKLOAD),
        Invocation(candidate, WORKLOAD),
        pairs=pairs,
        sandbox=sandbox,
        check=gate.check_for(WORKLOAD.id),
        timeout=timeout,
        warmup=warmup,
    )


def test_pairs_alternate_abba_after_one_warm_up_a_side(tmp_path: Path, sandbox: Sandbox) -> None:
    series = _measure(tmp_path, sandbox, "print('same')", "print('same')", pairs=4)
    # Warm-ups B C, then pair 0 B C, pair 1 C B, pair 2 B C, pair 3 C B.
    assert (tmp_path / "order.log").read_text() == "BC" + "BC" + "CB" + "BC" + "CB"
    assert [(s.side[0], s.pair_index, s.position) for s in series.samples] == [
        ("b", 0, 0),
        ("c", 0, 1),
        ("c", 1, 0),
        ("b", 1, 1),
        ("b", 2, 0),
        ("c", 2, 1),
        ("c", 3, 0),
        ("b", 3, 1),
    ]
    assert series.clean and series.pairs == 4 and series.measurement_error is None


def test_warm_ups_are_recorded_but_never_reach_the_values(tmp_path: Path, sandbox: Sandbox) -> None:
    # Only a side's first run (its warm-up, since the gate's runs are counted too) is
    # huge: it builds 150 MiB. If a warm-up leaked into the values, memory would show it.
    body = """
    if RUN == {first}:
        block = b"x" * (150 << 20)
    print("same")
    """
    series = _measure(
        tmp_path,
        sandbox,
        body.format(first=3),  # the gate runs the baseline twice first
        body.format(first=2),  # and the candidate once
        pairs=3,
        warmup=1,
    )
    assert [s.side for s in series.warmups] == ["baseline", "candidate"]
    assert all(s.warmup and s.pair_index == -1 for s in series.warmups)
    assert all(s.max_rss_kib >= 150 * 1024 for s in series.warmups)
    for side in ("baseline", "candidate"):
        memory = series.values(side, "memory")
        assert len(memory) == 3
        assert max(memory) < 100 * 1024


def test_values_give_one_array_per_side_and_metric(tmp_path: Path, sandbox: Sandbox) -> None:
    series = _measure(tmp_path, sandbox, "print(sum(range(10**5)))", "print(sum(range(10**5)))")
    for side in ("baseline", "candidate"):
        for metric in ("wall", "cpu", "memory"):
            values = series.values(side, metric)
            assert len(values) == 4
            assert all(v > 0 for v in values)


def test_peak_memory_of_a_100_mib_allocation_reads_at_least_100_mib(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    body = "block = b'x' * (100 << 20)\nprint(len(block))\n"
    series = _measure(tmp_path, sandbox, body, body, pairs=2)
    for side in ("baseline", "candidate"):
        assert min(series.values(side, "memory")) >= 100 * 1024


def test_peak_memory_is_the_targets_not_the_judges(tmp_path: Path, sandbox: Sandbox) -> None:
    # The judge holds 300 MiB while it runs a target that needs far less: the reading must be
    # the target's, not max(judge, target) as a child exec'd straight from the judge reports.
    held = b"x" * (300 << 20)
    series = _measure(tmp_path, sandbox, "print('small')", "print('small')", pairs=2)
    assert len(held) == 300 << 20
    for side in ("baseline", "candidate"):
        assert max(series.values(side, "memory")) < 100 * 1024


def test_a_candidate_whose_output_changes_on_a_later_run_is_caught(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Candidate runs: 1 in the gate, 2 the warm-up, then pairs 0..; run 7 is pair 4's.
    candidate = "print('GET /a 4' if RUN >= 7 else 'GET /a 3')"
    series = _measure(tmp_path, sandbox, "print('GET /a 3')", candidate, pairs=10)
    (mismatch,) = series.mismatches
    assert (mismatch.side, mismatch.pair_index) == ("candidate", 4)
    assert mismatch.differences == (
        "stdout differs at line 1: baseline 'GET /a 3' candidate 'GET /a 4'",
    )
    assert not series.clean
    # The series stops at the mismatch: nothing after it was run.
    assert series.samples[-1].side == "candidate" and series.samples[-1].pair_index == 4
    assert series.pairs == 4


def test_a_candidate_that_stops_writing_its_output_file_on_a_later_run_is_caught(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    body = """
    if RUN < {last}:
        Path("result.txt").write_text("ok\\n")
    print("same")
    """
    series = _measure(
        tmp_path,
        sandbox,
        body.format(last=100),
        body.format(last=4),
        behaviour=Behaviour(output_files=["result.txt"]),
    )
    (mismatch,) = series.mismatches
    assert mismatch.differences == (
        "output file result.txt: baseline wrote it, candidate did not write it",
    )


def test_a_baseline_that_drifts_on_a_later_run_is_named_as_the_baseline(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    baseline = "print('late' if RUN >= 5 else 'same')"
    series = _measure(tmp_path, sandbox, baseline, "print('same')", pairs=6)
    (mismatch,) = series.mismatches
    assert mismatch.side == "baseline"
    assert mismatch.differences == (
        "stdout differs at line 1: reference 'same' this baseline run 'late'",
    )
    assert "baseline run (pair" in mismatch.describe()


def test_a_run_that_exceeds_the_timeout_is_a_named_measurement_error(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    candidate = "import time\nif RUN >= 4:\n    time.sleep(60)\nprint('same')\n"
    rule = TimeoutRule(floor_s=1.0, multiple=2.0, warmup_s=30.0)
    series = _measure(tmp_path, sandbox, "print('same')", candidate, pairs=6, timeout=rule)
    error = series.measurement_error
    assert error is not None
    assert (error.kind, error.side, error.pair_index) == ("timeout", "candidate", 1)
    assert error.message == "candidate run of workload 'w' timed out after 1 s"
    assert series.timeouts_s == (1.0,)
    assert series.pairs == 1 and not series.clean


def test_a_crash_is_a_named_measurement_error(tmp_path: Path, sandbox: Sandbox) -> None:
    # A real segmentation fault: under --as-pid-1 the target is its namespace's init, and the
    # kernel drops a default-action signal that init sends itself, but never a real fault.
    candidate = "import ctypes\nif RUN >= 3:\n    ctypes.string_at(0)\nprint('same')\n"
    series = _measure(tmp_path, sandbox, "print('same')", candidate, pairs=4)
    error = series.measurement_error
    assert error is not None
    assert (error.kind, error.side, error.pair_index) == ("crash", "candidate", 0)
    assert "crashed with exit status" in error.message
    assert series.mismatches == ()


def test_a_timeout_in_the_warm_up_stops_the_series_before_any_pair(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    candidate = "import time\nif RUN >= 2:\n    time.sleep(60)\nprint('same')\n"
    rule = TimeoutRule(floor_s=1.0, multiple=2.0, warmup_s=1.0)
    series = _measure(tmp_path, sandbox, "print('same')", candidate, timeout=rule)
    assert series.measurement_error is not None
    assert series.measurement_error.pair_index == -1
    assert series.samples == ()


def test_every_sample_reaches_the_callback_in_run_order(tmp_path: Path, sandbox: Sandbox) -> None:
    baseline = _program(tmp_path, "baseline", "print('same')")
    candidate = _program(tmp_path, "candidate", "print('same')")
    seen: list[Sample] = []
    series = measure_pairs(
        Invocation(baseline, WORKLOAD),
        Invocation(candidate, WORKLOAD),
        pairs=2,
        sandbox=sandbox,
        check=_Always(),
        timeout=GENEROUS,
        on_sample=seen.append,
    )
    assert seen == [*series.warmups, *series.samples]
    (window,) = series.loads
    assert isinstance(window.before, LoadSnapshot) and window.after.at >= window.before.at


def test_a_confirmation_series_extends_the_first(tmp_path: Path, sandbox: Sandbox) -> None:
    baseline = _program(tmp_path, "baseline", "print('same')")
    candidate = _program(tmp_path, "candidate", "print('same')")

    def series() -> PairSeries:
        return measure_pairs(
            Invocation(baseline, WORKLOAD),
            Invocation(candidate, WORKLOAD),
            pairs=3,
            sandbox=sandbox,
            check=_Always(),
            timeout=GENEROUS,
        )

    first, second = series(), series()
    both = first.extend(second)
    assert both.series_count == 2 and both.pairs == 6
    assert both.values("baseline", "wall") == first.values("baseline", "wall") + second.values(
        "baseline", "wall"
    )
    assert [s.series for s in both.samples] == [0] * 6 + [1] * 6
    assert len(both.loads) == 2 and len(both.timeouts_s) == 2


def test_the_reference_check_removes_stale_output_files_before_each_run(tmp_path: Path) -> None:
    program = _program(tmp_path, "candidate", "print('same')")
    stale = program.root / "result.txt"
    stale.write_text("stale")
    reference = Observation(Fingerprint("exact", 0, "0" * 64, None, ()), b"", None, ())
    ReferenceCheck(reference, Behaviour(output_files=["result.txt"])).prepare(
        Invocation(program, WORKLOAD)
    )
    assert not stale.exists()


def test_the_pair_timeout_is_a_multiple_of_the_baseline_warm_up_with_a_floor() -> None:
    assert pair_timeout(0.02, multiple=2.0, floor_s=30.0) == 30.0
    assert pair_timeout(40.0, multiple=2.0, floor_s=30.0) == 80.0
    rule = TimeoutRule(floor_s=30.0, multiple=2.0, warmup_s=60.0)
    assert rule.for_pairs([20.0, 16.0]) == 40.0
    assert rule.for_pairs([]) == 60.0
    from_manifest = TimeoutRule.from_manifest(Policy(), Workload(id="w", timeout_s=45.0))
    assert from_manifest == TimeoutRule(floor_s=30.0, multiple=2.0, warmup_s=45.0)


def test_nonsense_arguments_are_refused(tmp_path: Path, sandbox: Sandbox) -> None:
    program = _program(tmp_path, "baseline", "print('same')")
    with pytest.raises(ValueError, match="pairs"):
        measure_pairs(
            Invocation(program, WORKLOAD),
            Invocation(program, WORKLOAD),
            pairs=0,
            sandbox=sandbox,
            check=_Always(),
            timeout=GENEROUS,
        )


def _timed(wall_s: float, cpu_s: float) -> Sample:
    return Sample("baseline", 0, 0, wall_s, cpu_s, 1000, 0, "", "")


def test_a_series_reports_the_median_cpu_per_wall_of_its_runs() -> None:
    samples = (_timed(1.0, 1.3), _timed(2.0, 2.0), _timed(0.5, 1.0), _timed(0.0, 0.1))
    series = PairSeries("w", samples, (), (), (), (), ())
    # Ratios 1.3, 1.0 and 2.0; a run with no wall has none.
    assert series.cpu_per_wall == pytest.approx(1.3)
    assert PairSeries("w", (), (), (), (), (), ()).cpu_per_wall == 0.0


def test_only_a_sandboxed_program_without_network_gets_a_namespace_to_tear_down(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    program = _program(tmp_path, "baseline", "")
    assert private_network(sandbox, program)
    assert not private_network(sandbox, replace(program, network=True))
    assert not private_network(make_sandbox(allow_unsandboxed=True), program)


def test_every_run_of_a_built_file_runs_a_fresh_copy_of_it(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # A side that runs one file for a whole judgement keeps the memory that file was placed
    # in, and identical Go binaries ran up to 5 % apart for that alone. Each run logs the inode
    # and change time of the script it runs (a freed inode's number is reused, the pair is
    # not): a fresh copy is a new file with the same bytes at the same path.
    body = """
    import os
    with open(Path.cwd().parent / "inodes.log", "a") as log:
        made = os.stat(__file__)
        log.write(f"{SIDE[0]}{made.st_ino}.{made.st_ctime_ns}\\n")
    print('same')
    """
    baseline = _program(tmp_path, "baseline", body)
    candidate = _program(tmp_path, "candidate", body)
    scripts = {p.side: Path(p.argv[1]) for p in (baseline, candidate)}
    before = {side: path.read_bytes() for side, path in scripts.items()}
    series = measure_pairs(
        Invocation(replace(baseline, fresh_per_run=(scripts["baseline"],)), WORKLOAD),
        Invocation(replace(candidate, fresh_per_run=(scripts["candidate"],)), WORKLOAD),
        pairs=3,
        sandbox=sandbox,
        check=_Always(),
        timeout=GENEROUS,
        warmup=1,
    )
    assert series.clean and series.pairs == 3
    runs = (tmp_path / "inodes.log").read_text().split()
    # One warm-up and three measured runs a side, each on its own inode.
    assert len(runs) == 8 and len(set(runs)) == 8
    assert {side: path.read_bytes() for side, path in scripts.items()} == before
    assert all(os.access(path, os.R_OK) for path in scripts.values())
