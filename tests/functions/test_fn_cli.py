"""`speedproof fn verify` through its Typer app: exit codes 0, 1 and 3, human and JSON output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from speedproof.functions.cli import _show, fn_app
from speedproof.functions.verifier import VerifyResult
from support.paths import ROOT

EXAMPLES = ROOT / "src/speedproof/functions/examples"
RUNNER = CliRunner()


def test_a_trap_candidate_exits_1_and_reports_json() -> None:
    result = RUNNER.invoke(
        fn_app,
        [
            "verify",
            str(EXAMPLES / "distinct_count.case.json"),
            str(EXAMPLES / "distinct_count_singletons.py"),
            "--json",
        ],
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["status"] == "mismatch"
    assert report["category"] == "semantic"


def test_a_patch_file_that_does_not_apply_exits_1(tmp_path: Path) -> None:
    patch = tmp_path / "bad.patch"
    patch.write_text("<<<<<<< SEARCH\nnothing like it\n=======\nx\n>>>>>>> REPLACE\n")
    result = RUNNER.invoke(
        fn_app, ["verify", str(EXAMPLES / "distinct_count.case.json"), str(patch)]
    )
    assert result.exit_code == 1
    assert "patch_error" in result.output


def test_an_unreadable_case_exits_3(tmp_path: Path) -> None:
    case = tmp_path / "case.json"
    case.write_text('{"id": "x"}')
    result = RUNNER.invoke(fn_app, ["verify", str(case), str(EXAMPLES / "distinct_count_fast.py")])
    assert result.exit_code == 3


@pytest.mark.slow
def test_a_faster_candidate_exits_0_with_a_human_report() -> None:
    result = RUNNER.invoke(
        fn_app,
        [
            "verify",
            str(EXAMPLES / "bucket_counts.case.json"),
            str(EXAMPLES / "bucket_counts_fast.py"),
            "--random",
            "16",
            "--seed",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "passed" in result.output
    assert "Ir (function)" in result.output


def test_a_detail_quoting_brackets_is_shown_as_written() -> None:
    result = VerifyResult(
        status="mismatch",
        reward=0.0,
        runs=1,
        detail="[fn] returned 3 for xs[1:]; expected [2]",
        duration_s=0.1,
        verifier_digest="0" * 64,
    )
    console = Console(record=True, width=200)
    _show(result, console)
    assert "[fn] returned 3 for xs[1:]; expected [2]" in console.export_text()
