"""Under `--json`, a command that ends in an error (exit 3) still prints one JSON object on stdout.

`judge` runs as a user runs it (a real process); the other commands that take `--json` run
in-process through typer's runner, which keeps stdout and stderr apart.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from speedproof.cli import app
from speedproof.cli_errors import fail
from speedproof.examples import get_example, materialise

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
BAD_MANIFEST = '[target]\nname = "x"\nlanguage = "rust"\n[tests]\nrunner = "go"\n'
ATTACK = get_example("logstat").folder / "patches" / "attack-edit-test.patch"


def _judge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, "judge", str(ATTACK), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def _one_error_object(stdout: str) -> dict[str, Any]:
    """stdout is exactly one JSON object saying `error` (json.loads refuses anything extra)."""
    document = json.loads(stdout)
    assert isinstance(document, dict), document
    assert document["verdict"] == "error"
    assert document["exit_code"] == 3
    return document


def _bad_manifest(tmp_path: Path) -> Path:
    manifest = tmp_path / "speedproof.toml"
    manifest.write_text(BAD_MANIFEST)
    return manifest


def test_judge_json_with_a_malformed_manifest_prints_one_error_object_and_exits_3(
    tmp_path: Path,
) -> None:
    done = _judge("-m", str(_bad_manifest(tmp_path)), "--ledger", str(tmp_path / "ledger"))
    assert done.returncode == 3, done.stderr
    document = _one_error_object(done.stdout)
    assert document["kind"] == "ManifestError"
    assert "target.language" in document["message"] and "line 3" in document["message"]
    # The human message stays on stderr, as without --json.
    assert "target.language" in done.stderr


def test_judge_json_when_the_sandbox_is_missing_prints_one_error_object_and_exits_3(
    tmp_path: Path,
) -> None:
    repo = materialise(get_example("logstat"), tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "patch"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    env = {**os.environ, "PATH": str(bin_dir)}
    done = _judge("-m", str(repo), "--ledger", str(tmp_path / "ledger"), env=env)
    assert done.returncode == 3, done.stderr
    document = _one_error_object(done.stdout)
    assert document["kind"] == "SandboxUnavailable"
    assert "bubblewrap" in document["message"] and "bubblewrap" in done.stderr


def test_judge_json_outside_a_git_repository_prints_one_infrastructure_error(
    tmp_path: Path,
) -> None:
    target = tmp_path / "logstat"
    shutil.copytree(get_example("logstat").folder, target, ignore=shutil.ignore_patterns("patches"))
    done = _judge("-m", str(target), "--ledger", str(tmp_path / "ledger"), "--no-sandbox")
    assert done.returncode == 3, done.stderr
    document = _one_error_object(done.stdout)
    assert document["kind"] == "InfrastructureError"
    assert "not inside a git working tree" in document["message"]
    assert "not inside a git working tree" in done.stderr


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Every other command that takes --json, each led into an error."""
    bad = str(_bad_manifest(tmp_path))
    missing = str(tmp_path / "no-ledger")
    case = tmp_path / "case.json"
    case.write_text('{"id": "x"}')
    candidate = tmp_path / "f.py"
    candidate.write_text("def f():\n    return 1\n")
    return {
        "ledger list": ["ledger", "list", "--ledger", missing, "--json"],
        "ledger show": ["ledger", "show", "1", "--ledger", missing, "--json"],
        "verify": ["verify", "-m", bad, "--json"],
        "calibrate": ["calibrate", "-m", bad, "--json"],
        "advisor drift": ["advisor", "drift", "nothing-1", "nothing-2", "--json"],
        "fn verify": ["fn", "verify", str(case), str(candidate), "--json"],
    }


@pytest.mark.parametrize(
    "command",
    ["ledger list", "ledger show", "verify", "calibrate", "advisor drift", "fn verify"],
)
def test_every_command_taking_json_prints_one_error_object_when_it_exits_3(
    command: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, _commands(tmp_path)[command])
    assert result.exit_code == 3, result.output
    document = _one_error_object(result.stdout)
    assert document["message"]
    assert document["message"].split()[0] in result.stderr


def test_without_json_an_error_prints_nothing_on_stdout(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ledger", "list", "--ledger", str(tmp_path / "none")])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert "no ledger at" in result.stderr


def test_an_error_message_naming_a_manifest_table_keeps_its_brackets(tmp_path: Path) -> None:
    probe = typer.Typer()

    @probe.command()
    def boom() -> None:
        raise fail("raise [policy] max_pairs or add [holdout] dir", as_json=True)

    result = CliRunner().invoke(probe, [])
    assert result.exit_code == 3
    assert "[policy] max_pairs" in result.stderr and "[holdout] dir" in result.stderr
    assert json.loads(result.stdout)["message"] == "raise [policy] max_pairs or add [holdout] dir"
