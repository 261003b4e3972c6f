"""Machine and toolchain facts for the ledger, and the contention rule."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.judge.measure.environment import (
    UNKNOWN,
    LoadSnapshot,
    contended,
    contention_threshold,
    cpu_model,
    describe_environment,
    go_version,
    governor,
    load_snapshot,
    measurement_contended,
    memory_total_kib,
    own_load,
)


def _load(one: float) -> LoadSnapshot:
    return LoadSnapshot(one=one, five=one, fifteen=one, at=0.0)


def test_the_environment_of_this_machine_is_described() -> None:
    facts = describe_environment()
    assert facts.cores >= 1 and facts.online_cores >= facts.cores
    assert facts.cpu_model and facts.cpu_model != UNKNOWN
    assert facts.kernel.startswith("Linux ")
    assert facts.memory_total_kib is not None and facts.memory_total_kib > 0
    assert facts.python.startswith("CPython 3.")
    assert facts.bwrap is not None and facts.bwrap.startswith("bubblewrap ")
    assert facts.go is None
    assert facts.as_dict()["cores"] == facts.cores


def test_valgrind_is_reported_when_installed() -> None:
    facts = describe_environment()
    if shutil.which("valgrind") is None:
        assert facts.valgrind is None
    else:
        assert facts.valgrind is not None and facts.valgrind.startswith("valgrind-")


def _go() -> str:
    found = shutil.which("go") or str(Path(sys.executable).parent / "go")
    if not os.access(found, os.X_OK):
        pytest.skip("no go executable on PATH or beside the interpreter")
    return found


def test_the_go_version_is_read_when_a_go_executable_is_given() -> None:
    assert describe_environment(go=_go()).go is not None
    assert go_version(_go()).startswith("go version go")


def test_a_go_executable_that_does_not_answer_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match="version"):
        go_version(str(tmp_path / "no-such-go"))


def test_the_cpu_model_is_read_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t: Example CPU @ 3.0GHz\n")
    assert cpu_model(cpuinfo) == "Example CPU @ 3.0GHz"
    arm = tmp_path / "cpuinfo-arm"
    arm.write_text("processor\t: 0\nBogoMIPS\t: 50.00\n\nModel\t: Raspberry Pi 4\n")
    assert cpu_model(arm) == "Raspberry Pi 4"


def test_a_missing_governor_reads_unknown(tmp_path: Path) -> None:
    assert governor(tmp_path / "absent") == UNKNOWN
    present = tmp_path / "scaling_governor"
    present.write_text("performance\n")
    assert governor(present) == "performance"


def test_total_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24684096 kB\nMemFree:        1 kB\n")
    assert memory_total_kib(meminfo) == 24684096
    assert memory_total_kib(tmp_path / "absent") is None


def test_a_load_snapshot_holds_the_three_averages() -> None:
    snapshot = load_snapshot()
    assert min(snapshot.one, snapshot.five, snapshot.fifteen) >= 0
    assert snapshot.at > 0


def test_a_quiet_machine_is_not_contended() -> None:
    assert not contended(_load(0.2), _load(0.9), cores=2)
    assert not contended(_load(0.2), _load(1.4), cores=1)


def test_load_above_the_cores_minus_half_a_core_is_contended_at_either_end() -> None:
    assert contention_threshold(8) == 7.5
    assert contended(_load(7.6), _load(1.0), cores=8)
    assert contended(_load(1.0), _load(7.6), cores=8)
    assert not contended(_load(7.4), _load(7.4), cores=8)


def test_small_machines_get_a_floor_of_one_and_a_half() -> None:
    assert contention_threshold(1) == 1.5
    assert contention_threshold(2) == 1.5
    assert contended(_load(0.1), _load(1.6), cores=2)


def test_a_multi_threaded_target_s_own_load_raises_the_threshold() -> None:
    # A Go target using 1.3 cores of CPU per second of wall holds the load near 2.4 on its own.
    assert own_load(1.3) == pytest.approx(0.3)
    assert own_load(0.7) == 0.0
    assert contended(_load(2.4), _load(2.4), cores=2)
    assert not contended(_load(2.4), _load(2.4), cores=2, own_load=own_load(2.0))
    assert contended(_load(3.6), _load(2.4), cores=2, own_load=own_load(2.0))
    # A sandboxed run's private network is torn down by a kernel worker the load counts too.
    assert own_load(1.03, private_network=True) == pytest.approx(1.03)
    assert not contended(
        _load(2.4), _load(2.3), cores=2, own_load=own_load(1.03, private_network=True)
    )


def test_a_sandboxed_series_is_judged_with_its_own_load_allowed_for() -> None:
    # Back-to-back sandboxed runs of a single-threaded target held the load at 2.2 on their
    # own: not contended. Half a core more than that is, and so is 2.2 with the network shared.
    def rule(load: float, *, private: bool) -> bool:
        return measurement_contended(
            _load(1.0), _load(load), 1.03, private_network=private, cores=2
        )

    assert not rule(2.2, private=True)
    assert rule(2.7, private=True)
    assert rule(2.2, private=False)
