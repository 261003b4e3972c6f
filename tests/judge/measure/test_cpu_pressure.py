"""Contention read from the kernel's CPU pressure-stall counters, round by round.

The share of a round's wall time during which some task waited for a CPU comes from the `some`
total of /proc/pressure/cpu read at both ends; the load average is the fallback when that file
cannot be read. The real-process test pins a CPU hog to the round's own CPU: the kernel then
counts a waiting task for as long as the target runs, whatever else the machine is doing, so
its assertion is about the kernel's accounting, not about how long anything took.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.judge.measure.environment import (
    PRESSURE_FALLBACK_NOTE,
    STALL_SHARE_THRESHOLD,
    LoadSnapshot,
    contended,
    contention_note,
    load_snapshot,
    measurement_contended,
    parse_cpu_stall_us,
    read_cpu_stall_us,
    stall_share,
)
from speedproof.judge.measure.pinning import available_cpus
from speedproof.judge.measure.runner import PairSeries, Round, TimeoutRule, measure_pairs
from speedproof.judge.measure.schedule import SequentialMeasurement, Sinks, schedule_for
from speedproof.manifest import Workload
from speedproof.manifest_loading import parse_manifest
from support.toy_target import toy_manifest, workload_table

PRESSURE = Path("/proc/pressure/cpu")
needs_pressure = pytest.mark.skipif(
    read_cpu_stall_us(PRESSURE) is None, reason="this kernel exposes no /proc/pressure/cpu"
)
# As the kernel prints it (5.x and 6.x): a `some` line, and a `full` line since 5.13.
KERNEL_TEXT = """\
some avg10=31.39 avg60=10.05 avg300=17.47 total=1568905701
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
"""
# About 0.1 s of pure-Python work: long against start-up, short enough for a quick test.
LOOP = "i = 0\nwhile i < 2_000_000:\n    i += 1\n"
MANIFEST = toy_manifest(
    workload_table("w", "prog.py"), instructions=False, policy="pairs = 4\nguardrails = []"
)


def _snapshot(load: float, stall_us: int | None, at_s: float) -> LoadSnapshot:
    return LoadSnapshot(
        one=load, five=load, fifteen=load, at=at_s, cpu_stall_us=stall_us, monotonic_s=at_s
    )


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


# ----- parsing and the share ------------------------------------------------------------------


def test_the_some_total_is_read_from_the_kernel_s_cpu_pressure_text() -> None:
    assert parse_cpu_stall_us(KERNEL_TEXT) == 1_568_905_701
    # A kernel before 5.13 prints the `some` line alone.
    assert parse_cpu_stall_us(KERNEL_TEXT.splitlines()[0]) == 1_568_905_701


def test_text_without_a_some_total_reads_as_unknown() -> None:
    assert parse_cpu_stall_us("") is None
    assert parse_cpu_stall_us("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n") is None
    assert parse_cpu_stall_us("some avg10=1.00 avg60=0.00 avg300=0.00 total=many\n") is None


def test_the_stall_share_is_the_stalled_part_of_the_round_s_wall_time() -> None:
    # 0.3 s of stall in a 2 s round.
    before = _snapshot(0.0, 1_000_000, at_s=10.0)
    after = _snapshot(0.0, 1_300_000, at_s=12.0)
    assert stall_share(before, after) == pytest.approx(0.15)


def test_a_round_with_an_unread_end_has_no_stall_share() -> None:
    assert stall_share(_snapshot(0.0, None, 10.0), _snapshot(0.0, 5, 12.0)) is None
    assert stall_share(_snapshot(0.0, 5, 10.0), _snapshot(0.0, None, 12.0)) is None
    assert stall_share(_snapshot(0.0, 5, 10.0), _snapshot(0.0, 9, 10.0)) is None


def test_a_stalled_round_is_contended_however_low_the_load_average() -> None:
    before = _snapshot(0.1, 0, at_s=0.0)
    stalled = _snapshot(0.1, int(2e6 * (STALL_SHARE_THRESHOLD + 0.05)), at_s=2.0)
    assert contended(before, stalled, cores=2)
    assert measurement_contended(before, stalled, 1.0, private_network=True, cores=2)


def test_a_round_without_stalls_is_not_contended_however_high_the_load_average() -> None:
    # The 1-minute load still carries what ran in the minute before the round.
    before = _snapshot(6.0, 0, at_s=0.0)
    calm = _snapshot(6.0, int(2e6 * (STALL_SHARE_THRESHOLD - 0.05)), at_s=2.0)
    assert not contended(before, calm, cores=2)
    assert contention_note(before, calm) is None


# ----- the fallback ---------------------------------------------------------------------------


def test_an_absent_pressure_file_falls_back_to_the_load_average(tmp_path: Path) -> None:
    absent = tmp_path / "pressure" / "cpu"
    snapshot = load_snapshot(absent)
    assert snapshot.cpu_stall_us is None and snapshot.one >= 0.0
    assert stall_share(snapshot, load_snapshot(absent)) is None
    assert contention_note(snapshot, snapshot) == PRESSURE_FALLBACK_NOTE
    assert "1-minute load average" in PRESSURE_FALLBACK_NOTE
    # Without the counters the load rule decides: 2.0 > 1.5 on two cores, 0.2 is not.
    high, low = _snapshot(2.0, None, 0.0), _snapshot(0.2, None, 2.0)
    assert contended(high, low, cores=2)
    assert not contended(low, low, cores=2)


def test_an_unreadable_pressure_file_falls_back_too(tmp_path: Path) -> None:
    # A directory in its place: reading it fails as an unreadable file does (root reads past
    # file modes, so a chmod would not make it unreadable here).
    assert read_cpu_stall_us(tmp_path) is None
    garbled = tmp_path / "cpu"
    garbled.write_text("not pressure\n")
    assert read_cpu_stall_us(garbled) is None


# ----- real processes -------------------------------------------------------------------------


@pytest.fixture
def hog_on_the_last_cpu() -> Iterator[int]:
    """A busy loop pinned to the highest-numbered CPU this process may use; yields that CPU."""
    cpu = max(available_cpus())
    body = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nprint('spinning', flush=True)\n"
    hog = subprocess.Popen(
        [sys.executable, "-c", body + "while True:\n    pass\n"], stdout=subprocess.PIPE
    )
    try:
        assert hog.stdout is not None and hog.stdout.readline() == b"spinning\n"
        yield cpu
    finally:
        hog.kill()
        hog.wait()


class _Matches:
    """Every run matches: these tests are about the machine, not the program."""

    def prepare(self, invocation: Invocation) -> None:
        return None

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]:
        return ()


def _program(tmp_path: Path, side: Side, body: str = LOOP) -> Program:
    root = tmp_path / side
    root.mkdir(parents=True, exist_ok=True)
    (root / "prog.py").write_text(textwrap.dedent(body))
    return Program(side=side, root=root, argv=("python3",), env=build_env([]), writable=(tmp_path,))


def _round(tmp_path: Path, sandbox: Sandbox, cpus: frozenset[int]) -> PairSeries:
    workload = Workload(id="w", args=["prog.py"])
    return measure_pairs(
        Invocation(_program(tmp_path, "baseline"), workload),
        Invocation(_program(tmp_path, "candidate"), workload),
        pairs=2,
        sandbox=sandbox,
        check=_Matches(),
        timeout=TimeoutRule(floor_s=60.0, multiple=10.0, warmup_s=60.0),
        round_=Round(cpus=cpus),
    )


@needs_pressure
def test_a_round_measured_beside_a_cpu_hog_on_its_cpu_reads_as_contended(
    tmp_path: Path, sandbox: Sandbox, hog_on_the_last_cpu: int
) -> None:
    series = _round(tmp_path, sandbox, frozenset({hog_on_the_last_cpu}))
    assert series.clean
    (window,) = series.loads
    share = stall_share(window.before, window.after)
    assert share is not None and share > STALL_SHARE_THRESHOLD, share
    assert measurement_contended(
        window.before, window.after, series.cpu_per_wall, private_network=True
    )


@needs_pressure
def test_the_kernel_s_stall_counter_is_read_at_both_ends_of_a_round(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Whether a round on a shared machine stalls depends on its neighbours, so this asserts only
    # that both ends were read and the counter never runs backwards.
    (window,) = _round(tmp_path, sandbox, frozenset({max(available_cpus())})).loads
    assert window.before.cpu_stall_us is not None and window.after.cpu_stall_us is not None
    assert window.after.cpu_stall_us >= window.before.cpu_stall_us
    share = stall_share(window.before, window.after)
    assert share is not None and 0.0 <= share <= 1.01
    assert contention_note(window.before, window.after) is None


# ----- the receipt and the verdict's notes ----------------------------------------------------


def _measure(
    tmp_path: Path, sandbox: Sandbox, pressure: Path
) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """One fixed look of 4 pairs; the `measure:` gate details and the evidence's notes."""
    manifest = parse_manifest(MANIFEST)
    programs: dict[Side, Program] = {
        "baseline": _program(tmp_path, "baseline"),
        "candidate": _program(tmp_path, "candidate"),
    }
    details: list[dict[str, Any]] = []
    measurement = SequentialMeasurement(
        manifest=manifest,
        sandbox=sandbox,
        programs=programs,
        checks=lambda workload: _Matches(),
        schedule=schedule_for(manifest),
        cpus=None,
        # Each round's receipt is its `measure:` gate (the `schedule` gate sums the whole).
        sinks=Sinks(
            gate=lambda name, passed, seconds, reasons, detail: (
                details.append(detail) if name.startswith("measure:") else None
            )
        ),
        pressure=pressure,
    )
    evidence = measurement.run()
    return details, evidence.measurement_notes


@needs_pressure
def test_the_receipt_of_each_round_carries_its_stall_share(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    details, notes = _measure(tmp_path, sandbox, PRESSURE)
    assert details
    for detail in details:
        assert {"load_before", "load_after", "cpu_stall_share"} <= detail.keys()
        assert isinstance(detail["cpu_stall_share"], float)
        assert detail["contention_from"] == "cpu pressure"
    assert PRESSURE_FALLBACK_NOTE not in notes


def test_without_cpu_pressure_the_verdict_says_contention_was_read_from_the_load_average(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    details, notes = _measure(tmp_path, sandbox, tmp_path / "no-pressure")
    assert details and all(d["cpu_stall_share"] is None for d in details)
    assert all(d["contention_from"] == "1-minute load average" for d in details)
    assert notes.count(PRESSURE_FALLBACK_NOTE) == 1
