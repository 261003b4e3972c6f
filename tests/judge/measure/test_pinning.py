"""Pinning the timed runs to CPUs: the chosen set, a real pinned run, and the judge moved away."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.process import ProcessResult, run_process
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.judge.measure.pinning import available_cpus, describe, judge_elsewhere, timed_cpus
from speedproof.judge.measure.runner import Round, TimeoutRule, measure_pairs
from speedproof.manifest import Workload

MANY = len(available_cpus()) >= 2
needs_two = pytest.mark.skipif(not MANY, reason="needs a process allowed on two CPUs")
# Prints the CPUs the run may use, as the kernel reports them for the running process.
SHOW_CPUS = "import os; print(sorted(os.sched_getaffinity(0)))"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def test_all_means_no_pinning() -> None:
    assert timed_cpus("all", frozenset({0, 1})) is None
    assert describe(None) == "all CPUs (not pinned)"


def test_the_highest_numbered_cpus_are_chosen() -> None:
    assert timed_cpus(1, frozenset({0, 1})) == frozenset({1})
    assert timed_cpus(2, frozenset({0, 1, 3})) == frozenset({1, 3})
    assert describe(frozenset({3, 1})) == "CPU 1, 3"


def test_more_cpus_than_the_process_may_use_is_an_infrastructure_error() -> None:
    with pytest.raises(InfrastructureError, match=r"policy.timed_cpus = 3 cannot be met.*0, 1"):
        timed_cpus(3, frozenset({0, 1}))


def _show(tmp_path: Path, sandbox: Sandbox, cpus: frozenset[int] | None) -> ProcessResult:
    program = _program(tmp_path, "baseline")
    return run_process(
        program.argv,
        cwd=program.root,
        sandbox=sandbox,
        spec=program.spec(),
        timeout_s=30,
        cpus=cpus,
    )


def _program(tmp_path: Path, side: Side) -> Program:
    root = tmp_path / side
    root.mkdir(parents=True, exist_ok=True)
    (root / "show.py").write_text(SHOW_CPUS + "\n")
    return Program(
        side=side,
        root=root,
        argv=("python3", str(root / "show.py")),
        env=build_env([]),
        writable=(tmp_path,),
    )


@needs_two
def test_a_pinned_run_may_use_only_its_cpus_inside_the_sandbox(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    chosen = timed_cpus(1)
    assert chosen is not None
    result = _show(tmp_path, sandbox, chosen)
    assert result.ok, result.tail()
    assert result.stdout.decode().strip() == str(sorted(chosen))


def test_an_unpinned_run_keeps_every_cpu_of_the_judge(tmp_path: Path, sandbox: Sandbox) -> None:
    result = _show(tmp_path, sandbox, None)
    assert result.stdout.decode().strip() == str(sorted(available_cpus()))


def test_a_cpu_the_kernel_refuses_is_an_infrastructure_error(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    absent = max(available_cpus()) + 4000
    with pytest.raises(InfrastructureError, match=rf"cannot pin CPUs {absent}"):
        _show(tmp_path, sandbox, frozenset({absent}))


@needs_two
def test_the_judge_leaves_the_pinned_cpus_while_measuring_and_gets_them_back() -> None:
    before = available_cpus()
    pinned = frozenset({max(before)})
    with judge_elsewhere(pinned):
        assert available_cpus() == before - pinned
    assert available_cpus() == before


def test_the_judge_stays_where_it_is_when_no_other_cpu_is_left() -> None:
    before = available_cpus()
    with judge_elsewhere(before):
        assert available_cpus() == before
    with judge_elsewhere(None):
        assert available_cpus() == before


class _Printed:
    """Keeps what every run printed; every run matches."""

    def __init__(self) -> None:
        self.printed: list[str] = []

    def prepare(self, invocation: Invocation) -> None:
        return None

    def differences(self, invocation: Invocation, result: ProcessResult) -> tuple[str, ...]:
        self.printed.append(result.stdout.decode().strip())
        return ()


@needs_two
def test_every_timed_run_of_both_sides_runs_on_the_rounds_cpus(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    before = available_cpus()
    chosen = timed_cpus(1)
    check = _Printed()
    series = measure_pairs(
        Invocation(_program(tmp_path, "baseline"), Workload(id="w")),
        Invocation(_program(tmp_path, "candidate"), Workload(id="w")),
        pairs=2,
        sandbox=sandbox,
        check=check,
        timeout=TimeoutRule(floor_s=30.0, multiple=2.0, warmup_s=30.0),
        round_=Round(cpus=chosen),
    )
    assert series.clean
    # One warm-up a side and two pairs: six runs, every one pinned.
    assert check.printed == [str(sorted(chosen or ()))] * 6
    assert available_cpus() == before
