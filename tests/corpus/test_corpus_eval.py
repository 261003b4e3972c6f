"""Evaluation categorises replayed answers through the real verifier and writes a report with
checksums, per-family tallies and a self-contained chart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from speedproof.agents.providers.replay import ReplayProvider, recorded_line
from speedproof.corpus.evaluate import EvalConfig, case_seed, evaluate
from speedproof.corpus.jsonl import read_rows, sha256_file
from speedproof.corpus.prompts import build_messages, canonical_patch
from speedproof.corpus.splits import split_path
from speedproof.functions.case import model_view
from support.corpus import padded, unverified_folder, wrapped, wrong_constant

INVALID = (
    "<<<<<<< SEARCH\n    this line is not in the function\n=======\n    pass\n>>>>>>> REPLACE\n"
)
MALFORMED = "The inner loop could use a set."


# About 28 s of real verifications; `make test-slow` (the fn pipeline test covers eval in short).
@pytest.mark.slow
def test_replayed_answers_land_in_their_failure_categories(tmp_path: Path) -> None:
    pairs = [p for p in unverified_folder(tmp_path / "corpus") if p.split == "dev"][:6]
    ref = [p.case.reference_source for p in pairs]
    answers = [
        (canonical_patch(ref[0], pairs[0].fast_source), "passed"),
        (MALFORMED, "formatting"),
        (INVALID, "invalid_patch"),
        (canonical_patch(ref[3], wrong_constant(pairs[3].fast_source)), "semantic_failure"),
        (canonical_patch(ref[4], padded(ref[4])), "missed_optimization"),
        (canonical_patch(ref[5], wrapped(ref[5])), "correct_not_faster"),
    ]
    recording = tmp_path / "student.jsonl"
    recording.write_text(
        "".join(
            recorded_line("student", text, messages=build_messages(model_view(p.case)), model="s-1")
            + "\n"
            for p, (text, _) in zip(pairs, answers, strict=True)
        )
    )
    out = tmp_path / "report"
    split_file = split_path(tmp_path / "corpus", "dev")
    report = evaluate(
        [p.case for p in pairs],
        ReplayProvider(recording),
        EvalConfig(split="dev"),
        out,
        split_file=split_file,
        provider_name="replay",
    )
    results = read_rows(out / "results.jsonl")
    assert [r["category"] for r in results] == [expected for _, expected in answers]
    assert results[0]["reward"] > 0 and results[0]["cand_ir"] < results[0]["ref_ir"]
    assert results[3]["status"] == "mismatch"
    assert results[4]["status"] == results[5]["status"] == "no_speedup"

    seeds = [r["seed"] for r in results]
    assert len(set(seeds)) == 6  # each case its own hidden inputs
    assert seeds == [case_seed(report["seed"], p.case) for p in pairs]  # reproducible from one

    assert report == json.loads((out / "report.json").read_text())
    assert report["protocol"] == "one-shot" and report["models"] == ["s-1"]
    assert report["split_sha256"] == sha256_file(split_file)
    assert report["results_sha256"] == sha256_file(out / "results.jsonl")
    total = report["total"]
    assert (total["cases"], total["judged"], total["passed"]) == (6, 6, 1)
    assert total["pass_rate"] == 1 / 6
    assert sum(f["cases"] for f in report["families"].values()) == 6
    chart = (out / "chart.html").read_text()
    assert "plotly" in chart and len(chart) > 1_000_000  # plotly.js embedded, no network


def test_a_case_seed_depends_on_the_base_seed_and_the_case_alone(tmp_path: Path) -> None:
    cases = [p.case for p in unverified_folder(tmp_path / "corpus")][:2]
    assert case_seed(7, cases[0]) == case_seed(7, cases[0])
    assert case_seed(7, cases[0]) != case_seed(8, cases[0])
    assert case_seed(7, cases[0]) != case_seed(7, cases[1])
