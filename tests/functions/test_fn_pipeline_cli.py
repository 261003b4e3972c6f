"""The function-mode pipeline through its commands, on a tiny corpus and the real verifier:
corpus generate → audit → collect (interrupted, resumed) → sft → eval. About 30 verifications
at ~10 s of CPU each, so the module is in the slow suite; the fast suite covers each step on its
own (test_corpus_collect.py, test_corpus_eval.py, test_corpus_verified.py, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof.agents.providers.base import ChatMessage
from speedproof.agents.providers.replay import recorded_line
from speedproof.corpus.generate import TrustedPair, build_pairs
from speedproof.corpus.jsonl import read_rows, sha256_file
from speedproof.corpus.prompts import build_messages, canonical_patch, retry_messages
from speedproof.corpus.splits import MANIFEST, load_split, split_path
from speedproof.functions.case import model_view
from support.corpus import PIPELINE, fn_app, padded, wrapped, wrong_constant

pytestmark = pytest.mark.slow
RUNNER = CliRunner()
SIZES = PIPELINE.sizes
GENERATE = [
    "corpus", "generate", "--seed", str(PIPELINE.seed), "--train", str(SIZES["train"]),
    "--dev", str(SIZES["dev"]), "--seen", str(SIZES["frozen_seen"]),
    "--heldout", str(SIZES["frozen_heldout"]),
]  # fmt: skip
MALFORMED = "I would put the values in a set first, then look each query up."


def _run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(fn_app(), list(args))
    return result.exit_code, " ".join(result.output.split())  # rich wraps at 80 columns


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    cache = tmp_path_factory.getbasetemp() / "pipeline-cache.jsonl"
    code, output = _run(*GENERATE, "--out", str(folder), "--cache", str(cache))
    assert code == 0, output
    return folder


@pytest.fixture(scope="module")
def pairs() -> dict[str, TrustedPair]:
    return {p.case.id: p for p in build_pairs(PIPELINE)}


def _context(pair: TrustedPair) -> list[ChatMessage]:
    return build_messages(model_view(pair.case))


def _correct(pair: TrustedPair) -> str:
    return canonical_patch(pair.case.reference_source, pair.fast_source)


def test_generation_is_deterministic_down_to_file_checksums(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path.parent / "pipeline-cache.jsonl"  # the module fixture's cache
    code, output = _run(*GENERATE, "--out", str(tmp_path), "--cache", str(cache))
    assert code == 0, output
    assert f"0 verified now, {sum(SIZES.values())} from the cache" in output
    first = json.loads((corpus / MANIFEST).read_text())
    again = json.loads((tmp_path / MANIFEST).read_text())
    assert first == again
    for split, entry in first["splits"].items():
        assert entry["cases"] == SIZES[split]
        assert sha256_file(split_path(tmp_path, split)) == entry["sha256"]
    assert first["splits"]["frozen_seen"]["forbidden_uses"][:2] == [
        "never train",
        "never select checkpoints",
    ]


def test_the_generated_corpus_passes_the_audit_and_holds_no_fast_source(
    corpus: Path, pairs: dict[str, TrustedPair]
) -> None:
    code, output = _run("corpus", "audit", str(corpus))
    assert code == 0, output
    written = "".join(p.read_text() for p in corpus.glob("*.jsonl"))
    for pair in pairs.values():
        assert pair.fast_source not in written


def test_collect_resumes_after_an_interruption_without_duplicating_rows(
    corpus: Path, pairs: dict[str, TrustedPair], tmp_path: Path
) -> None:
    train = [pairs[c.id] for c in load_split(corpus, "train")]
    first, second, retried, hopeless = train
    partial = tmp_path / "partial.jsonl"
    partial.write_text(
        recorded_line("teacher", _correct(first), messages=_context(first), model="teacher-1")
        + "\n"
        + recorded_line("teacher", _correct(second), messages=_context(second), model="t-1")
        + "\n"
    )
    turns = tmp_path / "turns.jsonl"
    code, output = _run(
        "collect", str(corpus), "--provider", f"replay:{partial}", "--out", str(turns)
    )
    assert code == 3 and "has no answer" in output  # interrupted at the third case
    assert [r["case_id"] for r in read_rows(turns)] == [first.case.id, second.case.id]

    retry = retry_messages(_context(retried), MALFORMED, "formatting")
    full = tmp_path / "full.jsonl"
    full.write_text(
        "\n".join(
            [
                recorded_line("teacher", MALFORMED, messages=_context(retried)),
                recorded_line("teacher", _correct(retried), messages=retry),
                recorded_line("teacher", MALFORMED, messages=_context(hopeless)),
                recorded_line(
                    "teacher",
                    MALFORMED,
                    messages=retry_messages(_context(hopeless), MALFORMED, "formatting"),
                ),
            ]
        )
        + "\n"
    )
    code, output = _run(
        "collect", str(corpus), "--provider", f"replay:{full}", "--out", str(turns),
        "--attempts", "2",
    )  # fmt: skip
    assert code == 0, output
    rows = read_rows(turns)
    assert [r["case_id"] for r in rows] == [p.case.id for p in train]
    assert [r["kind"] for r in rows] == ["turn", "turn", "turn", "exhausted"]
    assert rows[2]["attempt"] == 2
    assert rows[3]["categories"] == ["formatting", "formatting"]
    assert all(r["reward"] > 0 and r["verifier_digest"] for r in rows[:3])
    # A third run has nothing left to do and asks the provider nothing.
    code, output = _run(
        "collect", str(corpus), "--provider", f"replay:{partial}", "--out", str(turns)
    )
    assert code == 0 and "skipped 4 (already done)" in output
    assert len(read_rows(turns)) == 4


def _turns_file(corpus: Path, pairs: dict[str, TrustedPair], path: Path, split: str) -> Path:
    rows = []
    for case in load_split(corpus, split):
        pair = pairs[case.id]
        rows.append(
            {"kind": "turn", "case_id": case.id, "family": case.family,
             "template": case.template, "patch": _correct(pair)}
        )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sft_builds_rows_from_train_turns_and_refuses_a_dev_case(
    corpus: Path, pairs: dict[str, TrustedPair], tmp_path: Path
) -> None:
    turns = _turns_file(corpus, pairs, tmp_path / "turns.jsonl", "train")
    out = tmp_path / "sft.jsonl"
    family = load_split(corpus, "train")[0].family
    code, output = _run(
        "sft", str(corpus), "--turns", str(turns), "--out", str(out), "--focus", f"{family}=2"
    )
    assert code == 0, output
    rows = read_rows(out)
    assert len(rows) == SIZES["train"] + 2
    assert {r["source"] for r in rows} == {"teacher", "focus"}

    leaky = _turns_file(corpus, pairs, tmp_path / "leaky.jsonl", "dev")
    with turns.open("a") as handle:
        handle.write(leaky.read_text().splitlines()[0] + "\n")
    code, output = _run("sft", str(corpus), "--turns", str(turns), "--out", str(tmp_path / "x"))
    assert code == 3 and "outside train" in output
    assert not (tmp_path / "x").exists()


def test_eval_categorises_replayed_answers(
    corpus: Path, pairs: dict[str, TrustedPair], tmp_path: Path
) -> None:
    dev = [pairs[c.id] for c in load_split(corpus, "dev")]
    invalid = (
        "<<<<<<< SEARCH\n    this line is not in the function\n=======\n    pass\n>>>>>>> REPLACE\n"
    )
    answers = {
        dev[0].case.id: (_correct(dev[0]), "passed"),
        dev[1].case.id: (MALFORMED, "formatting"),
        dev[2].case.id: (invalid, "invalid_patch"),
        dev[3].case.id: (
            canonical_patch(dev[3].case.reference_source, wrong_constant(dev[3].fast_source)),
            "semantic_failure",
        ),
        dev[4].case.id: (
            canonical_patch(dev[4].case.reference_source, padded(dev[4].case.reference_source)),
            "missed_optimization",
        ),
        dev[5].case.id: (
            canonical_patch(dev[5].case.reference_source, wrapped(dev[5].case.reference_source)),
            "correct_not_faster",
        ),
    }
    recording = tmp_path / "student.jsonl"
    recording.write_text(
        "".join(
            recorded_line("student", answers[p.case.id][0], messages=_context(p), model="s-1")
            + "\n"
            for p in dev
        )
    )
    out = tmp_path / "report"
    code, output = _run(
        "eval", str(corpus), "--split", "dev", "--provider", f"replay:{recording}",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    results = {r["case_id"]: r for r in read_rows(out / "results.jsonl")}
    assert {cid: r["category"] for cid, r in results.items()} == {
        cid: expected for cid, (_, expected) in answers.items()
    }
    report = json.loads((out / "report.json").read_text())
    assert report["protocol"] == "one-shot"
    assert report["split_sha256"] == sha256_file(split_path(corpus, "dev"))
    assert report["results_sha256"] == sha256_file(out / "results.jsonl")
    assert report["total"]["passed"] == 1 and report["total"]["judged"] == 6
    assert report["total"]["categories"]["infrastructure"] == 0
    assert sum(f["cases"] for f in report["families"].values()) == 6
    chart = (out / "chart.html").read_text()
    assert "plotly" in chart and len(chart) > 1_000_000  # the library is embedded
    assert "total" in output and "never train" in output  # the table, the split's uses
