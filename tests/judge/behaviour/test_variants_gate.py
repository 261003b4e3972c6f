"""The variants gate's rules, with real target scripts run under the real bubblewrap sandbox."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from speedproof.ground.process import run_process
from speedproof.ground.program import Program, Side
from speedproof.ground.sandbox import Sandbox, build_env, make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.behaviour.variants import (
    VariantSides,
    VariantsResult,
    check_variants,
    for_variants,
    make_variants,
)
from speedproof.judge.inputs.variant_settings import VariantSettings
from speedproof.manifest import Behaviour, Workload

LOG = "".join(f"10.0.0.{i % 9} GET /items/{i} 200 {i * 7} 0.{i % 10}3\n" for i in range(300))

# Sums every number of the log and counts its lines; a line with a NUL is an error (exit 1).
SUMS = """
import sys
data = open(sys.argv[1], "rb").read()
if b"\\0" in data:
    sys.exit("a NUL byte")
total = sum(float(t) for t in data.split() if t.replace(b".", b"", 1).lstrip(b"-").isdigit())
print(len(data.splitlines()), round(total, 3))
"""


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def _program(tmp_path: Path, side: Side, code: str) -> Program:
    root = tmp_path / side
    root.mkdir(parents=True, exist_ok=True)
    (root / "prog.py").write_text(textwrap.dedent(code))
    (root / "access.log").write_text(LOG)
    return Program(side, root, ("python3", str(root / "prog.py")), build_env([]), (tmp_path,))


@dataclass
class _Judged:
    programs: dict[str, Program]
    baseline: Tree
    candidate: Tree


def _check(
    tmp_path: Path,
    sandbox: Sandbox,
    candidate: str,
    settings: VariantSettings,
    baseline: str = SUMS,
) -> VariantsResult:
    base = _program(tmp_path, "baseline", baseline)
    cand = _program(tmp_path, "candidate", candidate)
    workload = Workload(id="day", args=["access.log"], files=["access.log"])
    (tmp_path / "variants").mkdir()
    made = make_variants([workload], base.root, tmp_path / "variants", 7, settings.count)
    trees = [Tree(p.side, p.root, p.root, tmp_path / f"{p.side}-out") for p in (base, cand)]
    judged = _Judged({"baseline": base, "candidate": cand}, trees[0], trees[1])
    sides = VariantSides(
        base,
        cand,
        for_variants(Behaviour(), judged),
        {"day": "exact"},
        (),
        sandbox,
        tmp_path,
    )
    return check_variants(made, sides, settings)


def test_a_candidate_that_agrees_on_every_variant_passes_and_failing_alike_is_agreement(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _check(tmp_path, sandbox, SUMS, VariantSettings(count=5))
    assert result.differences() == () and result.short() is None
    assert result.compared() == {"day": 5}
    # Variant 4 holds odd bytes, NUL among them: both sides exit 1 alike.
    assert result.detail()["agree"] == 5


def test_a_candidate_wrong_on_numbers_no_workload_holds_is_named_with_its_variant(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Numbers above 99,999 are capped: no workload holds one, a variant's edge numbers do.
    wrong = SUMS.replace("sum(float(t) for", "sum(min(99999.0, float(t)) for")
    result = _check(tmp_path, sandbox, wrong, VariantSettings(count=5))
    found = result.differences()
    assert found and found[0].startswith("behaviour differs on an input nobody has seen: day#")
    assert "stdout differs at line 1: baseline '" in found[0]
    assert result.detail()["differs"] >= 1


def test_a_baseline_that_answers_differently_each_time_is_skipped_not_charged(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    moving = SUMS + "import os\nprint(os.urandom(4).hex())\n"
    result = _check(tmp_path, sandbox, moving, VariantSettings(count=2), baseline=moving)
    assert result.differences() == ()
    assert result.detail()["skipped"] == 2
    assert "the baseline differs from itself" in result.detail()["skipped_notes"][0]


def test_variants_cut_short_by_the_budget_are_said_and_forbid_an_accept(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _check(tmp_path, sandbox, SUMS, VariantSettings(count=6, budget_s=0.01))
    assert result.detail()["not-run"] >= 4
    note = result.short()
    assert note is not None and "day " in note and "of the 6 a workload needs" in note
    lowered = VariantSettings(count=6, budget_s=0.01, minimum=0)
    assert VariantsResult(result.checked, result.seconds, lowered).short() is None


def test_two_sides_that_crash_alike_from_code_at_other_paths_and_lines_agree(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # An uncaught exception on a NUL byte: the candidate's traceback names its own file, at
    # other line numbers; the exception is the same.
    crashing = SUMS.replace('sys.exit("a NUL byte")', 'raise ValueError("a NUL byte")')
    moved = "# a comment\n# and another\n" + crashing
    result = _check(tmp_path, sandbox, moved, VariantSettings(count=5), baseline=crashing)
    assert result.differences() == () and result.compared() == {"day": 5}
    wrong = moved.replace('ValueError("a NUL byte")', 'KeyError("a NUL byte")')
    (tmp_path / "again").mkdir()
    caught = _check(tmp_path / "again", sandbox, wrong, VariantSettings(count=5), crashing)
    assert caught.differences() and "KeyError" in caught.differences()[0]


def test_a_run_without_the_launcher_reports_alike_and_still_stops_at_its_timeout(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    program = _program(tmp_path, "baseline", "import sys\nprint(sys.argv[1:])\nsys.exit(3)\n")
    spec = program.spec()
    argv = [*program.argv, "a b"]
    measured = run_process(argv, cwd=program.root, sandbox=sandbox, spec=spec, timeout_s=30)
    plain = run_process(
        argv, cwd=program.root, sandbox=sandbox, spec=spec, timeout_s=30, launcher=False
    )
    assert (plain.exit_code, plain.stdout, plain.stderr) == (3, b"['a b']\n", b"")
    assert (measured.exit_code, measured.stdout) == (plain.exit_code, plain.stdout)
    sleeper = [*program.argv[:1], "-c", "import time; time.sleep(30)"]
    late = run_process(
        sleeper, cwd=program.root, sandbox=sandbox, spec=spec, timeout_s=0.5, launcher=False
    )
    assert late.timed_out and late.wall_s < 10
