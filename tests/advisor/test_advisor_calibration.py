"""Calibration: gates against the usual answer, baselines pinned to one build and wording, and
the shipped reference set and baseline with their digests."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest

from speedproof.advisor.baseline import (
    SHIPPED_BASELINE,
    Baseline,
    QuestionStats,
    load_baseline,
    measure_baseline,
    save_baseline,
    shipped_baseline,
)
from speedproof.advisor.errors import BaselineMismatch
from speedproof.advisor.gates import SD_FLOOR, Gate, Gates, Usual, judge
from speedproof.advisor.questions import ALL_QUESTIONS, CAUSES, HAZARDS, questions_digest
from speedproof.advisor.reference import load_reference
from speedproof.advisor.static import STATIC_MODEL, StaticAdvisor
from speedproof.manifest import Advisor

USUAL = Usual(mean=0.3, sd=0.2, n=50)


def test_a_cause_needs_both_half_an_sd_above_the_usual_and_probability_one_half() -> None:
    gate = Gates().cause
    assert judge(0.55, USUAL, gate).outcome == "flagged"  # z = 1.25
    assert judge(0.45, USUAL, gate).outcome == "below-p"  # z = 0.75, p < 0.5
    high_usual = Usual(mean=0.6, sd=0.2, n=50)
    assert judge(0.65, high_usual, gate).outcome == "below-sd"  # z = 0.25
    assert judge(0.2, USUAL, gate).outcome == "below-both"


def test_hazards_use_the_stricter_gate() -> None:
    gates = Gates()
    assert judge(0.6, USUAL, gates.cause).passed
    assert not judge(0.6, USUAL, gates.hazard).passed  # z = 1.5 < 2
    assert judge(0.75, USUAL, gates.hazard).passed  # z = 2.25


def test_the_gates_default_to_the_manifest_defaults_and_follow_it() -> None:
    assert Gates.from_settings(Advisor()) == Gates()
    custom = Gates.from_settings(Advisor(cause_sd=1.0, cause_p=0.7, hazard_sd=3.0, hazard_p=0.9))
    assert custom == Gates(Gate(1.0, 0.7), Gate(3.0, 0.9))


def test_an_invariant_question_has_its_sd_floored_not_divided_by_zero() -> None:
    flat = Usual(mean=0.05, sd=0.0, n=50)
    judged = judge(0.81, flat, Gates().hazard)
    assert judged.z == pytest.approx((0.81 - 0.05) / SD_FLOOR)
    assert judged.passed


def _baseline(model: str = "openai:build-a") -> Baseline:
    reference = load_reference()
    stats = {q.id: QuestionStats(mean=0.2, sd=0.1, n=2) for q in ALL_QUESTIONS}
    return Baseline(
        model=model,
        questions_digest=questions_digest(),
        reference_digest=reference.digest,
        measured_at="now",
        stats=stats,
        answers={q.id: {"a": 0.1, "b": 0.3} for q in ALL_QUESTIONS},
    )


def test_a_baseline_is_refused_for_any_other_model_wording_or_reference() -> None:
    baseline = _baseline()
    reference = load_reference().digest
    baseline.check(model="openai:build-a", questions=questions_digest(), reference=reference)
    with pytest.raises(BaselineMismatch, match="not 'openai:build-b'"):
        baseline.check(model="openai:build-b", questions=questions_digest(), reference=reference)
    with pytest.raises(BaselineMismatch, match="other questions"):
        baseline.check(model="openai:build-a", questions="0" * 64, reference=reference)
    with pytest.raises(BaselineMismatch, match="another reference set"):
        baseline.check(model="openai:build-a", questions=questions_digest(), reference="0" * 64)


def test_a_baseline_file_round_trips_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    save_baseline(_baseline(), tmp_path / "b.json")
    assert load_baseline(tmp_path / "b.json") == _baseline()
    (tmp_path / "other.json").write_text('{"model": "x"}', encoding="utf-8")
    with pytest.raises(BaselineMismatch, match="not an advisor baseline"):
        load_baseline(tmp_path / "other.json")


def test_the_question_digest_changes_with_any_wording() -> None:
    first = ALL_QUESTIONS[0]
    changed = type(first)(first.id, first.kind, first.text + " ")
    assert changed.digest != first.digest
    assert questions_digest((changed, *ALL_QUESTIONS[1:])) != questions_digest()


def test_there_are_seven_cause_and_eight_hazard_questions() -> None:
    assert [q.id for q in ALL_QUESTIONS] == [*CAUSES, *HAZARDS]
    assert len(CAUSES) == 7 and len(HAZARDS) == 8


def test_the_reference_set_mixes_written_fixes_clean_functions_and_corpus_cases() -> None:
    reference = load_reference()
    items = reference.items
    assert 30 <= len(items) <= 60
    assert {i.language for i in items} == {"python", "go"}
    assert sum(1 for i in items if i.origin == "corpus") >= 10
    assert sum(1 for i in items if i.origin == "written" and not i.shows) >= 6
    assert len(reference.fixes) >= 20
    assert all(
        i.provenance.startswith(("written for the reference set", "function-mode corpus"))
        for i in items
    )
    shown = {cause for i in items for cause in i.shows}
    assert shown == set(CAUSES)
    assert {h for i in items for h in i.hazards} == set(HAZARDS)


def test_the_shipped_digests_match_the_reference_set_questions_and_baseline() -> None:
    folder = resources.files("speedproof.advisor").joinpath("reference")
    recorded = dict(
        line.split(" ", 1)
        for line in folder.joinpath("digests.txt").read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    )
    baseline_bytes = resources.files("speedproof.advisor").joinpath(SHIPPED_BASELINE).read_bytes()
    assert recorded["reference"] == load_reference().digest
    assert recorded["questions"] == questions_digest()
    assert recorded["baseline-static-v1.json"] == hashlib.sha256(baseline_bytes).hexdigest()
    shipped = shipped_baseline()
    assert shipped.model == STATIC_MODEL
    assert shipped.reference_digest == recorded["reference"]
    assert shipped.questions_digest == recorded["questions"]
    assert "static advisor" in shipped.note and "not a model" in shipped.note


def test_measuring_the_static_advisor_again_reproduces_the_shipped_baseline() -> None:
    shipped = shipped_baseline()
    again = measure_baseline(StaticAdvisor(), load_reference())
    assert again.answers == shipped.answers
    assert again.stats == shipped.stats
    assert again.model == shipped.model


def test_a_changed_reference_item_changes_the_digest(tmp_path: Path) -> None:
    text = resources.files("speedproof.advisor").joinpath("reference/functions.json")
    original = text.read_text("utf-8")
    edited = original.replace("def render_table(rows):", "def render_table(rows, sep):", 1)
    assert edited != original
    (tmp_path / "functions.json").write_text(edited, encoding="utf-8")
    assert load_reference(tmp_path / "functions.json").digest != load_reference().digest
