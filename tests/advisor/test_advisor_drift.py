"""The drift canary over two fake builds served by a real HTTP server: `speedproof advisor
baseline` measures each, `speedproof advisor drift OLD NEW` compares them answer by answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from speedproof.advisor.baseline import (
    load_baseline,
    measure_baseline,
    save_baseline,
    shipped_baseline,
)
from speedproof.advisor.cli import register
from speedproof.advisor.client import EndpointAdvisor
from speedproof.advisor.drift import compare
from speedproof.advisor.gates import Gate, Gates
from speedproof.advisor.questions import questions_digest
from speedproof.advisor.reference import load_reference
from support.advisor import build, nudged, spread_build
from support.model_server import ChatRequest, ModelServer, Reply

DELTA = 0.02


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    reference = load_reference()
    spread = spread_build(reference)
    builds = {"build-a": build(spread), "build-b": build(nudged(spread, reference, DELTA))}

    def answer(request: ChatRequest) -> Reply:
        return builds[request.model](request)

    with ModelServer(models=list(builds)) as running:
        running.answer_with(answer)
        yield running


@pytest.fixture(scope="module")
def baselines(server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("baselines")
    found = {}
    for model in ("build-a", "build-b"):
        answerer = EndpointAdvisor(f"openai:{model}", base_url=server.openai_url, max_retries=0)
        found[model] = folder / f"{model}.json"
        save_baseline(measure_baseline(answerer, load_reference()), found[model])
    return found


def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """speedproof (test harness)."""

    register(app)
    return app


def run(*args: str) -> tuple[int, str]:
    """Exit code and stdout (stderr carries progress and errors)."""
    result = CliRunner().invoke(cli(), list(args))
    return result.exit_code, result.stdout + (result.stderr if result.exit_code == 3 else "")


def test_the_baseline_command_measures_a_build_with_its_model_id_and_digests(
    server: ModelServer, tmp_path: Path
) -> None:
    out = tmp_path / "a.json"
    code, output = run(
        "advisor",
        "baseline",
        "--model",
        "openai:build-a",
        "--base-url",
        server.openai_url,
        "--out",
        str(out),
    )
    assert code == 0, output
    measured = load_baseline(out)
    assert measured.model == "openai:build-a"
    assert measured.questions_digest == questions_digest()
    assert measured.reference_digest == load_reference().digest
    assert len(measured.answers["allocation"]) == len(load_reference().items)
    assert len(measured.answers["ignored_error"]) == len(load_reference().fixes)
    assert "wrote" in output


def test_decisions_flip_while_every_mean_holds(baselines: dict[str, Path]) -> None:
    code, output = run(
        "advisor", "drift", str(baselines["build-a"]), str(baselines["build-b"]), "--json"
    )
    assert code == 1, output
    report = json.loads(output)
    assert max(abs(q["shift"]) for q in report["questions"]) < 1e-5  # means are kept to 6 decimals
    assert report["paired_mean_abs"] == pytest.approx(DELTA, abs=1e-3)
    assert report["flagged_set_flips"], report
    assert report["top_cause_flips"]
    assert report["cause_items"] == len(load_reference().items)


def test_the_drift_report_names_the_statistic_and_the_flips(baselines: dict[str, Path]) -> None:
    code, output = run("advisor", "drift", str(baselines["build-a"]), str(baselines["build-b"]))
    assert code == 1
    assert "paired mean |Δ| over" in output
    assert "flagged-cause sets flipped:" in output
    assert "top-ranked cause flipped:" in output


def test_drift_can_measure_the_new_build_now_and_save_it(
    server: ModelServer, baselines: dict[str, Path], tmp_path: Path
) -> None:
    saved = tmp_path / "b-now.json"
    code, output = run(
        "advisor",
        "drift",
        str(baselines["build-a"]),
        "openai:build-b",
        "--base-url",
        server.openai_url,
        "--save",
        str(saved),
        "--json",
    )
    assert code == 1, output
    assert load_baseline(saved).answers == load_baseline(baselines["build-b"]).answers


def test_the_same_build_measured_again_does_not_drift(
    server: ModelServer, baselines: dict[str, Path]
) -> None:
    code, output = run(
        "advisor",
        "drift",
        str(baselines["build-a"]),
        "openai:build-a",
        "--base-url",
        server.openai_url,
        "--json",
    )
    assert code == 0, output
    report = json.loads(output)
    assert report["paired_mean_abs"] == 0
    assert not report["flagged_set_flips"] and not report["hazard_set_flips"]


def test_flips_are_counted_per_function_against_each_builds_own_baseline(
    baselines: dict[str, Path],
) -> None:
    old, new = load_baseline(baselines["build-a"]), load_baseline(baselines["build-b"])
    report = compare(old, new, reference=load_reference(), gates=Gates())
    for flip in report.flagged_set_flips:
        assert flip.old != flip.new
    # A stricter probability gate (0.6) puts no answer near it: nothing flips.
    strict = Gates(cause=Gate(sd=0.5, p=0.6), hazard=Gate(sd=2.0, p=0.6))
    strict_report = compare(old, new, reference=load_reference(), gates=strict)
    assert not strict_report.flagged_set_flips and not strict_report.hazard_set_flips


def test_two_answers_trading_places_flip_two_hazard_decisions_and_move_no_statistic(
    baselines: dict[str, Path],
) -> None:
    old = load_baseline(baselines["build-a"])
    answers = dict(old.answers["ignored_error"])
    flagged = max(answers, key=lambda item: answers[item])
    quiet = min(answers, key=lambda item: answers[item])
    answers[flagged], answers[quiet] = answers[quiet], answers[flagged]
    swapped = {**old.answers, "ignored_error": answers}
    new = old.model_copy(update={"answers": swapped, "model": "openai:build-c"})
    report = compare(old, new, reference=load_reference(), gates=Gates())
    assert report.max_abs_shift == 0
    assert {flip.item for flip in report.hazard_set_flips} == {flagged, quiet}
    assert not report.flagged_set_flips


def test_baselines_over_different_questions_are_not_compared(
    baselines: dict[str, Path], tmp_path: Path
) -> None:
    other = load_baseline(baselines["build-b"]).model_copy(update={"questions_digest": "0" * 64})
    save_baseline(other, tmp_path / "other.json")
    code, output = run("advisor", "drift", str(baselines["build-a"]), str(tmp_path / "other.json"))
    assert code == 3
    assert "different questions" in output


def test_an_argument_that_is_neither_a_file_nor_a_model_is_refused(
    baselines: dict[str, Path],
) -> None:
    code, output = run("advisor", "drift", str(baselines["build-a"]), "missing.json")
    assert code == 3
    assert "neither a baseline file nor a model" in output


def test_without_a_model_the_baseline_command_measures_the_static_advisor(tmp_path: Path) -> None:
    out = tmp_path / "static.json"
    code, output = run("advisor", "baseline", "--out", str(out))
    assert code == 0, output
    assert load_baseline(out).answers == shipped_baseline().answers


def test_the_speedproof_command_line_has_the_advisor_commands() -> None:
    from speedproof.cli import app

    result = CliRunner().invoke(app, ["advisor", "--help"])
    assert result.exit_code == 0, result.output
    assert "baseline" in result.output and "drift" in result.output
