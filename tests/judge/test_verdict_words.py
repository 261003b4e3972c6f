"""The words a verdict is given in: a worse reading said as worse, a guard reason said once, and
an instruction change inside the lane's noise not called significant."""

from __future__ import annotations

from pathlib import Path

from speedproof.examples import get_example, materialise
from speedproof.judge.measure import instructions
from speedproof.judge.measure.instructions import (
    InstructionReading,
    InstructionRun,
    instruction_comparison,
)
from speedproof.judge.patches import judge_patch
from speedproof.judge.policy.decide import decide
from speedproof.judge.policy.evidence import Evidence, PolicyRules, exact_comparison
from support.evidence import gates_passed


def _wall(change_pct: float) -> Evidence:
    reading = exact_comparison(
        workload="parse",
        metric="wall",
        tier="representative",
        lane="timed",
        baseline=100.0,
        candidate=100.0 + change_pct,
    )
    return gates_passed(reading)


def test_a_best_reading_that_is_worse_is_said_to_be_worse_not_a_negative_improvement() -> None:
    verdict = decide(_wall(+1.08), PolicyRules())
    assert verdict.verdict == "inconclusive"
    (reason,) = verdict.reasons
    assert "1.08% worse" in reason
    assert "improvement of -" not in reason
    assert "3% floor" in reason


def test_a_best_reading_that_improves_too_little_still_names_its_improvement() -> None:
    (reason,) = decide(_wall(-1.5), PolicyRules()).reasons
    assert "an improvement of 1.50%, below the 3% floor" in reason


def test_a_protected_file_named_by_three_headers_is_refused_with_one_reason(
    tmp_path: Path,
) -> None:
    repo = materialise(get_example("logstat"), tmp_path)
    patch = get_example("logstat").folder / "patches" / "attack-edit-test.patch"
    assert patch.read_text().count("report_test.go") >= 3  # diff --git, ---, +++
    outcome = judge_patch(
        patch, repo, ledger_dir=tmp_path / "ledger", quiet=True, allow_unsandboxed=True
    )
    assert outcome.verdict.verdict == "rejected"
    (guard,) = outcome.gates
    (reason,) = guard.reasons
    assert reason.count("'report_test.go' is protected") == 1
    assert "from the `diff --git`, `---` and `+++` headers" in reason
    (said,) = outcome.verdict.reasons
    assert said.count("report_test.go") == 1


def _reading(side: str, *counts: int) -> InstructionReading:
    runs = tuple(InstructionRun(ir, 0, "0" * 64, None) for ir in counts)
    return InstructionReading("novel", side, runs)  # type: ignore[arg-type]


def test_an_instruction_change_inside_the_noise_floor_is_exact_but_not_significant() -> None:
    # +0.17 %: what a comment-only change read on a representative workload.
    base, cand = 1_000_000_000, 1_001_700_000
    comparison = instruction_comparison(
        _reading("baseline", base, base), _reading("candidate", cand), tier="representative"
    )
    assert comparison.exact and comparison.supported
    assert round(comparison.delta_pct, 2) == 0.17
    assert not comparison.significant
    assert f"{instructions.INSTRUCTION_NOISE_FLOOR_PCT:g}%" in comparison.note


def test_an_instruction_change_beyond_the_noise_floor_is_significant() -> None:
    base = 1_000_000_000
    cand = int(base - base * 2 * instructions.INSTRUCTION_NOISE_FLOOR_PCT / 100)
    comparison = instruction_comparison(
        _reading("baseline", base, base), _reading("candidate", cand), tier="representative"
    )
    assert comparison.significant and comparison.exact
    assert comparison.note == ""
