"""Candidates that hide work from the instruction lane, judged end to end on textstat.

textstat is judged with `primary_metric = "instructions"`, so the verdict rests on Cachegrind's
counts. Each patch (tests/support/escape.py) prints the baseline's report byte for byte when run
natively, and does the work somewhere the count does not reach, or prints something else only
when it is counted.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.examples import get_example, materialise
from speedproof.ground.invocation import Invocation
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import build_env, make_sandbox
from speedproof.judge.behaviour.check import ReferenceCheck, check_behaviour
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.measure.instructions import (
    InstructionReading,
    InstructionRun,
    count_instructions,
    instruction_comparison,
)
from speedproof.judge.measure.refusals import candidate_refusal
from speedproof.judge.outcome import Outcome
from speedproof.ledger import Ledger
from speedproof.manifest import Behaviour, Workload
from speedproof.manifest_loading import load_manifest
from support.escape import daemon_patch, killed_child_patch, under_valgrind_patch
from support.git import git

NOVEL = ["--top", "30", "data/novel.txt"]
TIMEOUT_S = 300.0


def _textstat(into: Path) -> Path:
    """textstat whose verdict rests on instruction counts."""
    repo = materialise(get_example("textstat"), into)
    manifest = repo / "speedproof.toml"
    text = manifest.read_text().replace("[policy]\n", '[policy]\nprimary_metric = "instructions"\n')
    manifest.write_text(text)
    git(repo, "commit", "-qam", "the verdict rests on instruction counts")
    return repo


def _run(repo: Path, *args: str) -> bytes:
    argv = [sys.executable, "-m", "textstat", *args]
    return subprocess.run(argv, cwd=repo, capture_output=True, check=True).stdout


def _judge(repo: Path, ledger: Path, patch: str) -> Outcome:
    with Ledger.in_folder(ledger) as book:
        judge = Judge(
            load_manifest(repo), sandbox=make_sandbox(), ledger=book, options=JudgeOptions(pairs=6)
        )
        return judge.judge(patch)


@pytest.mark.parametrize(
    "make", [killed_child_patch, daemon_patch, under_valgrind_patch], ids=lambda f: f.__name__
)
def test_every_hiding_patch_prints_the_baseline_report_when_run_natively(
    make: Callable[[Path], str], tmp_path: Path
) -> None:
    repo = _textstat(tmp_path / "repo")
    before = _run(repo, *NOVEL)
    subprocess.run(["git", "apply"], input=make(repo).encode(), cwd=repo, check=True)
    assert _run(repo, *NOVEL) == before


@pytest.mark.slow
def test_a_candidate_whose_worker_is_killed_before_its_count_is_written_is_rejected(
    tmp_path: Path,
) -> None:
    repo = _textstat(tmp_path / "repo")
    outcome = _judge(repo, tmp_path / "ledger", killed_child_patch(repo))
    assert outcome.verdict.verdict == "rejected", outcome.verdict.reasons
    assert "a process escaped counting: pid " in outcome.verdict.reasons[0]
    assert (
        "ended without its instruction count (killed by a signal?)" in (outcome.verdict.reasons[0])
    )


@pytest.mark.slow
def test_a_candidate_whose_worker_outlives_it_in_its_own_session_is_rejected(
    tmp_path: Path,
) -> None:
    repo = _textstat(tmp_path / "repo")
    outcome = _judge(repo, tmp_path / "ledger", daemon_patch(repo))
    assert outcome.verdict.verdict == "rejected", outcome.verdict.reasons
    assert "a process escaped counting: pid " in outcome.verdict.reasons[0]


@pytest.mark.slow
def test_a_candidate_that_prints_something_else_under_valgrind_is_rejected(
    tmp_path: Path,
) -> None:
    repo = _textstat(tmp_path / "repo")
    outcome = _judge(repo, tmp_path / "ledger", under_valgrind_patch(repo))
    assert outcome.verdict.verdict == "rejected", outcome.verdict.reasons
    assert "behaviour differs under instruction counting: " in outcome.verdict.reasons[0]
    assert "stdout differs" in outcome.verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# One counted run at a time, on small scripts

KILLED_CHILD = """import os, signal
reader, writer = os.pipe()
child = os.fork()
if child == 0:
    os.write(writer, str(sum(range(300_000))).encode())
    signal.pause()
print(os.read(reader, 64).decode())
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
"""
CHILD_EXITS = """import os
child = os.fork()
if child == 0:
    sum(range(300_000))
    os._exit(0)
os.waitpid(child, 0)
print("done")
"""


# A baseline reading that ran one program in one process.
BASE = InstructionReading("w", "baseline", (InstructionRun(1000, 0, "0" * 64, None),))


def _script(folder: Path, source: str, side: Side = "candidate") -> Program:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.py").write_text(source)
    return Program(side, folder, (sys.executable, "-S", "main.py"), build_env([]), (folder,))


def _count(program: Program, check: ReferenceCheck | None = None) -> InstructionReading:
    return count_instructions(
        Invocation(program, Workload(id="w")),
        sandbox=make_sandbox(),
        timeout_s=TIMEOUT_S,
        repeats=1,
        check=check,
    )


def test_a_child_killed_before_it_wrote_its_count_leaves_the_run_without_a_count(
    tmp_path: Path,
) -> None:
    reading = _count(_script(tmp_path / "p", KILLED_CHILD))
    (run,) = reading.runs
    assert run.ir is None and reading.counts == ()
    (why,) = run.escaped
    assert why.startswith("a process escaped counting: pid ")
    assert "-S main.py) ended without its instruction count (killed by a signal?)" in why
    assert run.error == why and run.behaviour == ()
    refused = candidate_refusal(BASE, reading, rests_on_instructions=True)
    assert refused is not None and not refused.safety_checks_passed
    assert refused.safety_detail == (f"{why}, on workload w under Cachegrind",)
    # A secondary reading is refused, not the candidate: the comparison says why it is missing.
    assert candidate_refusal(BASE, reading, rests_on_instructions=False) is None


def test_a_child_that_exits_is_counted_with_its_parent(tmp_path: Path) -> None:
    alone = _count(_script(tmp_path / "alone", 'print("done")\n'))
    forked = _count(_script(tmp_path / "forked", CHILD_EXITS))
    assert alone.counted and forked.counted, (alone.note, forked.note)
    assert forked.runs[0].escaped == ()
    # The child's loop of 300,000 additions is in the count: tens of millions of instructions.
    assert forked.counts[0] - alone.counts[0] > 10_000_000


def test_output_that_differs_under_counting_ends_the_candidate_as_a_behaviour_change(
    tmp_path: Path,
) -> None:
    source = (
        'import os\nprint("short" if "vgpreload" in open("/proc/self/maps").read() else "long")\n'
    )
    baseline = _script(tmp_path / "base", 'print("long")\n', side="baseline")
    judged = check_behaviour(
        baseline,
        baseline,
        [Workload(id="w")],
        Behaviour(),
        prefix=(),
        sandbox=make_sandbox(),
        timeout_for=lambda w: w.timeout_s,
    )
    reading = _count(_script(tmp_path / "cand", source), judged.check_for("w"))
    (run,) = reading.runs
    assert run.ir is None and run.behaviour and run.escaped == ()
    refused = candidate_refusal(BASE, reading, rests_on_instructions=False)
    assert refused is not None and not refused.behaviour_matches
    (detail,) = refused.behaviour_detail
    assert detail.startswith("behaviour differs under instruction counting: stdout differs")
    assert "'short'" in detail and detail.endswith("(workload w)")


REEXEC = """import os, sys
if len(sys.argv) == 1:
    child = os.fork()
    if child == 0:
        os.execv(sys.executable, [sys.executable, "-S", "main.py", "worker"])
    os.waitpid(child, 0)
else:
    print(sum(range(300_000)))
"""


def test_a_valgrindrc_in_the_candidates_folder_does_not_stop_its_children_being_counted(
    tmp_path: Path,
) -> None:
    plain = _count(_script(tmp_path / "a", REEXEC))
    program = _script(tmp_path / "b", REEXEC)
    # Read from the working directory by valgrind unless told to read its command line only.
    (program.root / ".valgrindrc").write_text("--trace-children-skip=*\n")
    with_rc = _count(program)
    assert plain.counted and with_rc.counted, (plain.note, with_rc.note)
    # The worker's 300,000 additions are tens of millions of instructions, counted either way;
    # where a program lives moves CPython's count by a few parts in a million (ADR 0021).
    assert with_rc.counts[0] == pytest.approx(plain.counts[0], rel=1e-5)
    assert with_rc.counts[0] > 50_000_000


EXEC_AWAY = """import os
total = sum(range(300_000))
os.execv("/bin/echo", ["echo", str(total)])
"""
PRINT_ONLY = """import os
os.execv("/bin/echo", ["echo", str(44999850000)])
"""


def test_a_program_that_replaces_itself_by_exec_after_the_work_is_refused_beside_a_baseline(
    tmp_path: Path,
) -> None:
    baseline = _count(replace(_script(tmp_path / "a", PRINT_ONLY), side="baseline"))
    candidate = _count(_script(tmp_path / "b", EXEC_AWAY))
    # Each run counted: the exec'd echo wrote a count, and the program before it left none.
    assert baseline.counted and candidate.counted, (baseline.note, candidate.note)
    assert candidate.runs[0].replaced == ("/bin/echo 44999850000",)
    assert candidate.runs[0].replaced == baseline.runs[0].replaced
    # Both sides exec'd away the same way: nothing is hidden beyond what the baseline hides.
    assert candidate_refusal(baseline, candidate, rests_on_instructions=True) is None

    lone = _count(replace(_script(tmp_path / "c", 'print("44999850000")\n'), side="baseline"))
    comparison = instruction_comparison(lone, candidate, tier="representative")
    assert not comparison.supported and not comparison.finite
    assert comparison.note.startswith(
        "candidate a process escaped counting: a program replaced itself by exec "
        "(/bin/echo 44999850000) before its count was written, 1 time(s) more"
    )
    refused = candidate_refusal(lone, candidate, rests_on_instructions=True)
    assert refused is not None and not refused.safety_checks_passed
    assert "replaced itself by exec (/bin/echo 44999850000)" in refused.safety_detail[0]
