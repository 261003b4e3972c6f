"""The instruction-count lane: real valgrind in the real bubblewrap sandbox, on the examples.

The examples are materialised into git repositories and built by their real toolchains; the
fast tests count the examples' own test inputs (one Cachegrind run of textstat takes ~2-6 s, of
logstat ~1 s), the slow one every representative workload three times.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.ground.errors import InfrastructureError
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.check import ReferenceCheck, check_behaviour
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.measure.cachegrind import CachegrindUnavailable
from speedproof.judge.measure.instructions import (
    STATISTICAL_RUNS,
    InstructionReading,
    InstructionRun,
    count_instructions,
    counting_env,
    instruction_comparison,
    instruction_timeout,
    sampled,
)
from speedproof.manifest import Behaviour, Manifest, Workload
from speedproof.manifest_loading import load_manifest

TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def _build(
    name: str, folder: Path, side: Side, sandbox: Sandbox, patch: str | None = None
) -> tuple[Program, Manifest]:
    """The example in a fresh repository under `folder`, optionally patched, built."""
    folder.mkdir(parents=True)
    root = materialise(get_example(name), folder)
    if patch is not None:
        patch_file = get_example(name).folder / "patches" / patch
        subprocess.run(["git", "apply", str(patch_file)], cwd=root, check=True)
    manifest = load_manifest(root).manifest
    tree = Tree(side, root, root, folder.parent / f"{folder.name}-out").checked()
    built = toolchain_for(manifest, sandbox).build(tree)
    assert built.ok and built.program is not None, built.log
    return built.program, manifest


def _reference(
    program: Program, workload: Workload, sandbox: Sandbox, manifest: Manifest | None = None
) -> ReferenceCheck:
    """The behaviour gate's reference for `workload`, from the baseline against itself."""
    judged = check_behaviour(
        program,
        program,
        [workload],
        manifest.behaviour if manifest is not None else Behaviour(),
        prefix=manifest.target.prefix if manifest is not None else (),
        sandbox=sandbox,
        timeout_for=lambda w: w.timeout_s,
    )
    return judged.check_for(workload.id)


def _script(folder: Path, name: str, source: str, side: Side = "baseline") -> Program:
    """A one-file Python program in its own folder (`-S`: no site import, a faster start)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(source)
    return Program(
        side=side,
        root=folder,
        argv=(sys.executable, "-S", name),
        env=build_env([]),
        writable=(folder,),
    )


def _reading(side: Side, *counts: int | None) -> InstructionReading:
    runs = tuple(
        InstructionRun(c, 0, "0" * 64, None if c is not None else "crashed") for c in counts
    )
    return InstructionReading("w", side, runs)


SAMPLE_TEXT = Workload(id="sample", args=["tests/data/sample.txt"])
SAMPLE_LOG = Workload(id="sample", args=["testdata/sample.log"])
RANDOM_LOOP = """import os
n = int.from_bytes(os.urandom(4), "big") % 200_000
total = 0
for i in range(n):
    total += i
print("done")
"""


# ---------------------------------------------------------------------------------------------
# Readings and comparisons as data


def test_exact_counts_compare_without_statistics_and_any_difference_is_significant() -> None:
    fewer = instruction_comparison(
        _reading("baseline", 1000, 1000), _reading("candidate", 900, 900), tier="representative"
    )
    assert (fewer.exact, fewer.supported, fewer.significant) == (True, True, True)
    assert fewer.lane == fewer.metric == "instructions"
    assert fewer.delta_pct == fewer.ci_low_pct == fewer.ci_high_pct == pytest.approx(-10.0)
    assert fewer.improvement_pct == pytest.approx(10.0)
    assert (fewer.n_baseline, fewer.n_candidate, fewer.p_value) == (2, 2, None)

    same = instruction_comparison(
        _reading("baseline", 1000, 1000), _reading("candidate", 1000, 1000), tier="stress"
    )
    assert (same.exact, same.supported, same.significant) == (True, True, False)
    assert same.delta_pct == 0.0 and same.tier == "stress"


def test_a_side_whose_counts_varied_supports_nothing_and_the_note_says_which_and_by_how_much() -> (
    None
):
    varied = instruction_comparison(
        _reading("baseline", 1000, 1000),
        _reading("candidate", 1000, 1010),
        tier="representative",
    )
    assert (varied.exact, varied.supported, varied.significant) == (False, False, False)
    assert math.isnan(varied.delta_pct) and not varied.finite
    assert varied.note == "candidate counts varied across 2 runs: 1,000 to 1,010 (1 %)"
    assert dict(varied.extra) == {"baseline_spread_pct": 0.0, "candidate_spread_pct": 1.0}

    failed = instruction_comparison(
        _reading("baseline", 1000, None), _reading("candidate", 5, 5), tier="representative"
    )
    assert not failed.supported and failed.note == "baseline run 2 of 2 failed: crashed"


def test_one_run_is_not_a_stable_reading() -> None:
    single = _reading("baseline", 1000)
    assert not single.stable and single.ir is None
    assert "one count cannot show" in single.note


def test_readings_of_different_workloads_or_the_wrong_sides_are_not_compared() -> None:
    other = InstructionReading("other", "candidate", _reading("candidate", 1, 1).runs)
    with pytest.raises(ValueError, match="cannot compare"):
        instruction_comparison(_reading("baseline", 1, 1), other, tier="representative")
    with pytest.raises(ValueError, match="baseline and a candidate"):
        instruction_comparison(
            _reading("candidate", 1, 1), _reading("candidate", 1, 1), tier="representative"
        )


def test_the_counting_environment_fixes_seeds_and_keeps_what_the_program_already_pinned() -> None:
    env, changed = counting_env({"PATH": "/bin", "PYTHONHASHSEED": "7", "GODEBUG": "x=1"})
    assert env["PYTHONHASHSEED"] == "7"
    assert env["GOMAXPROCS"] == "1"
    assert env["GODEBUG"] == "x=1,asyncpreemptoff=1,gcstoptheworld=1"
    assert dict(changed) == {"GOMAXPROCS": "1", "GODEBUG": env["GODEBUG"]}

    random_seed, _ = counting_env({"PYTHONHASHSEED": "random"})
    assert random_seed["PYTHONHASHSEED"] == "0"


def test_the_recommended_timeout_scales_the_native_run_with_a_floor() -> None:
    assert instruction_timeout(0.04) == 60.0
    assert instruction_timeout(2.0) == 120.0
    assert instruction_timeout(2.0, multiple=30, floor_s=10) == 60.0


# ---------------------------------------------------------------------------------------------
# Real valgrind


def test_without_valgrind_on_path_the_lane_fails_closed_with_a_named_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox
) -> None:
    program = _script(tmp_path / "p", "ok.py", "print('ok')\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(CachegrindUnavailable, match="valgrind is not installed") as caught:
        count_instructions(
            Invocation(program, Workload(id="w")), sandbox=sandbox, timeout_s=TIMEOUT_S
        )
    assert isinstance(caught.value, InfrastructureError)


def test_python_example_counts_are_identical_on_every_run_and_match_the_reference_output(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    program, manifest = _build("textstat", tmp_path / "base", "baseline", sandbox)
    check = _reference(program, SAMPLE_TEXT, sandbox, manifest)

    reading = count_instructions(
        Invocation(program, SAMPLE_TEXT),
        sandbox=sandbox,
        timeout_s=TIMEOUT_S,
        repeats=3,
        check=check,
    )

    assert reading.stable, reading.note
    assert len(reading.runs) == 3 and len(set(reading.counts)) == 1
    assert reading.ir is not None and reading.ir > 10_000_000
    assert all(run.error is None and run.exit_code == 0 for run in reading.runs)
    reference = check.reference.fingerprint.stdout_sha256
    assert {run.stdout_sha256 for run in reading.runs} == {reference}
    # textstat's toolchain already pins PYTHONHASHSEED=0; the lane adds only the Go settings.
    assert dict(reading.env) == {
        "GOMAXPROCS": "1",
        "GODEBUG": "asyncpreemptoff=1,gcstoptheworld=1",
    }
    assert reading.tool.startswith("valgrind-")


@pytest.mark.slow
def test_the_example_speedup_patch_changes_the_count_and_the_comparison_rests_on_it(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Folder names of equal length: where a program lives moves its count a little (ADR 0021).
    baseline, manifest = _build("textstat", tmp_path / "base", "baseline", sandbox)
    candidate, _ = _build(
        "textstat", tmp_path / "cand", "candidate", sandbox, patch="speedup-stopword-set.patch"
    )
    check = _reference(baseline, SAMPLE_TEXT, sandbox, manifest)

    readings = [
        count_instructions(
            Invocation(program, SAMPLE_TEXT), sandbox=sandbox, timeout_s=TIMEOUT_S, check=check
        )
        for program in (baseline, candidate)
    ]
    comparison = instruction_comparison(*readings, tier="representative")

    assert comparison.exact and comparison.supported and comparison.significant, comparison.note
    # A set instead of a list of 300 stop words: measured -5.0 % on this input.
    assert comparison.improvement_pct > 1.0, comparison.render()
    assert comparison.baseline_mean == readings[0].ir


def test_a_run_whose_output_differs_from_the_reference_is_an_error_not_a_count(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    workload = Workload(id="w")
    baseline = _script(tmp_path / "base", "main.py", "print('total: 3')\n")
    candidate = _script(tmp_path / "cand", "main.py", "print('total: 4')\n", side="candidate")
    check = _reference(baseline, workload, sandbox)

    reading = count_instructions(
        Invocation(candidate, workload), sandbox=sandbox, timeout_s=TIMEOUT_S, check=check
    )

    assert not reading.stable and reading.ir is None
    # The first failed run ends the reading: more runs under valgrind would change nothing.
    assert len(reading.runs) == 1
    error = reading.runs[0].error or ""
    assert error.startswith("behaviour under Cachegrind differs: stdout differs at line 1")
    assert "'total: 4'" in error and reading.note.startswith("run 1 of 1 failed")


@pytest.mark.slow
def test_a_program_whose_instruction_count_varies_is_counted_four_times_and_compared_as_samples(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    workload = Workload(id="w")
    steady = _script(tmp_path / "base", "main.py", "print('done')\n")
    varying = _script(tmp_path / "cand", "main.py", RANDOM_LOOP, side="candidate")

    base = count_instructions(Invocation(steady, workload), sandbox=sandbox, timeout_s=TIMEOUT_S)
    cand = count_instructions(
        Invocation(varying, workload), sandbox=sandbox, timeout_s=TIMEOUT_S, repeats=2
    )

    assert base.stable and len(base.runs) == 2, base.note
    # The second count differed from the first: the side is counted up to a sample of four.
    assert not cand.stable and cand.ir is None and len(cand.runs) == STATISTICAL_RUNS
    assert all(run.error is None for run in cand.runs)
    assert cand.note.startswith("counts varied across 4 runs")
    # A steady baseline counted twice is not a sample: the comparison still supports nothing.
    comparison = instruction_comparison(base, cand, tier="representative")
    assert not comparison.supported and not comparison.significant and not comparison.exact
    assert math.isnan(comparison.delta_pct)
    assert comparison.note.startswith("candidate counts varied across")


def test_varying_counts_of_four_runs_a_side_are_compared_by_welchs_t() -> None:
    # Go-like: 0.2 % between runs. A 5 % change is significant; a 0.3 % one is inside the floor.
    base = _reading("baseline", 1000, 1002, 999, 1001)
    faster = instruction_comparison(
        base, _reading("candidate", 950, 952, 949, 951), tier="representative"
    )
    assert (faster.exact, faster.supported, faster.significant) == (False, True, True)
    assert faster.lane == "instructions" and faster.delta_pct == pytest.approx(-5.0, abs=0.1)
    assert faster.note.startswith("counts vary between runs (baseline 0.3 %")
    assert faster.p_value is not None and faster.p_value < 0.05
    close = instruction_comparison(
        base, _reading("candidate", 1003, 1005, 1002, 1004), tier="representative"
    )
    assert close.finite and not close.significant
    assert "inside the 0.5% floor" in close.note
    same = instruction_comparison(
        base, _reading("candidate", 1000, 1002, 999, 1001), tier="representative"
    )
    assert same.finite and not same.significant


def test_a_shift_no_wider_than_one_sides_own_spread_is_not_a_significant_change() -> None:
    # The same binary on a busy core: one side's counts spread 0.9 %, and the two sides' means sit
    # 0.87 % apart, beyond the 0.5 % floor and past Welch's t at four a side.
    base = _reading("baseline", 100_000, 100_100, 100_050, 100_080)
    shifted = instruction_comparison(
        base, _reading("candidate", 100_500, 101_400, 101_000, 100_800), tier="representative"
    )
    assert shifted.finite and not shifted.significant
    assert "+0.87% is inside the 0.896% floor" in shifted.note
    # A 5 % change with the same spreads stands.
    real = instruction_comparison(
        base, _reading("candidate", 95_000, 95_950, 95_500, 95_300), tier="representative"
    )
    assert real.significant and real.delta_pct == pytest.approx(-4.7, abs=0.2)


def test_a_run_that_outlives_its_timeout_is_an_error_in_the_reading(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sleeper = _script(tmp_path / "p", "main.py", "import time\ntime.sleep(60)\n")
    reading = count_instructions(
        Invocation(sleeper, Workload(id="w")), sandbox=sandbox, timeout_s=3.0
    )
    assert not reading.stable and len(reading.runs) == 1
    assert reading.runs[0].error == "timed out after 3 s under Cachegrind"


def test_instructions_of_child_processes_are_counted_too(tmp_path: Path, sandbox: Sandbox) -> None:
    def shell(name: str, times: int) -> Program:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.sh").write_text(f"{sys.executable} -S -c pass\n" * times)
        return Program("baseline", folder, ("/bin/sh", "run.sh"), build_env([]), (folder,))

    once, twice = (
        count_instructions(
            Invocation(shell(name, times), Workload(id="w")), sandbox=sandbox, timeout_s=TIMEOUT_S
        )
        for name, times in (("once", 1), ("twice", 2))
    )
    assert once.stable and twice.stable, (once.note, twice.note)
    assert once.ir is not None and twice.ir is not None
    # Measured: `sh` with one command 27.93 M, with two 55.68 M; a Python start is ~27.7 M of
    # that and the shell ~0.2 M. Without --trace-children both would read ~0.2 M.
    python_start = twice.ir - once.ir
    assert python_start > 5_000_000
    assert once.ir > python_start


def test_go_example_counts_are_trusted_only_when_they_repeat_exactly(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    program, manifest = _build("logstat", tmp_path / "base", "baseline", sandbox)
    check = _reference(program, SAMPLE_LOG, sandbox, manifest)
    base, cand = (
        count_instructions(
            Invocation(replace(program, side=side), SAMPLE_LOG),
            sandbox=sandbox,
            timeout_s=TIMEOUT_S,
            check=check,
        )
        for side in ("baseline", "candidate")
    )
    for reading in (base, cand):
        assert all(run.error is None for run in reading.runs), reading.note
        # Two runs when they agree; a sample of four as soon as one differs.
        assert len(reading.runs) == (2 if reading.stable else STATISTICAL_RUNS), reading.note
    comparison = instruction_comparison(base, cand, tier="representative")
    if base.stable and cand.stable:
        assert comparison.exact and comparison.supported
    elif sampled(base) and sampled(cand):
        # The same binary on both sides: a figure, and no significant change.
        assert comparison.finite and not comparison.significant, comparison.note
    else:
        assert not comparison.supported and "counts varied across" in comparison.note


@pytest.mark.slow
@pytest.mark.parametrize("name", ["textstat", "logstat"])
def test_every_representative_workload_is_counted_three_times(
    name: str, tmp_path: Path, sandbox: Sandbox
) -> None:
    """Python counts repeat exactly; Go's vary by ~0.1-0.2 % and are then counted four times."""
    program, manifest = _build(name, tmp_path / "base", "baseline", sandbox)
    for workload in manifest.workloads:
        if workload.tier != "representative":
            continue
        check = _reference(program, workload, sandbox, manifest)
        reading = count_instructions(
            Invocation(program, workload, tuple(manifest.target.prefix)),
            sandbox=sandbox,
            timeout_s=TIMEOUT_S,
            repeats=3,
            check=check,
        )
        assert all(run.error is None for run in reading.runs), reading.note
        if manifest.target.language == "python":
            assert reading.stable and len(reading.runs) == 3, reading.note
        else:
            assert reading.stable or (
                reading.note.startswith("counts varied across") and sampled(reading)
            )
