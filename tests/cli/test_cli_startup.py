"""What a command loads before it does anything, and what a guard reject does not do.

Behaviour, never time: which modules a fresh process holds after `import speedproof.cli`,
`--help` and a guard-rejected `judge`, and what a guard reject leaves in the ledger and the
repository. The figures are benchmarks/cli_startup.py's.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof import cli
from speedproof.examples import get_example, materialise
from support.git import commit_all, git

# Imported only by the commands that need them: statistics, reports, model clients, training,
# function mode and the corpus, the judge's measuring path.
HEAVY = (
    "scipy",
    "numpy",
    "plotly",
    "jinja2",
    "openai",
    "anthropic",
    "transformers",
    "torch",
    "libcst",
    "speedproof.corpus",
    "speedproof.functions",
    "speedproof.advisor",
    "speedproof.agents",
    "speedproof.campaign",
    "speedproof.calibration",
    "speedproof.report",
)
# The commands whose modules load only when they run.
LAZY = ("calibrate", "verify", "optimize", "fn", "advisor")
# ...and of the heavy modules, what even `judge` does not need until a patch passes the guard.
MEASURING = ("scipy", "numpy", "plotly", "jinja2", "openai", "anthropic", "transformers")

_REPORT_MODULES = """
import json, sys
names = json.loads(sys.argv[1])
loaded = sorted(n for n in names if n in sys.modules)
with open(sys.argv[2], "w") as out:
    json.dump(loaded, out)
"""


def _loaded_after(
    code: str, tmp_path: Path, *args: str, names: tuple[str, ...] = HEAVY
) -> list[str]:
    """Run `code` in a fresh interpreter, then list which of `names` it had imported."""
    report = tmp_path / "modules.json"
    script = (
        "import sys\n"
        "argv = sys.argv[:]\n"
        "sys.argv = ['speedproof', *argv[3:]]\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "except SystemExit:\n    pass\n"
        "sys.argv = argv\n" + _REPORT_MODULES
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(names), str(report), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert report.exists(), done.stderr
    return list(json.loads(report.read_text()))


def test_importing_the_cli_imports_no_heavy_module(tmp_path: Path) -> None:
    assert _loaded_after("import speedproof.cli", tmp_path) == []


def test_the_top_level_help_lists_every_command_without_importing_them(tmp_path: Path) -> None:
    assert _loaded_after("from speedproof.cli import main\nmain()", tmp_path, "--help") == []
    listed = CliRunner().invoke(cli.app, ["--help"])
    assert listed.exit_code == 0, listed.output
    for name in ("judge", "manifest", "ledger", "report", *LAZY):
        assert f" {name} " in listed.output


@pytest.mark.parametrize("name", LAZY)
def test_each_lazy_command_is_listed_with_its_own_first_line_of_help(name: str) -> None:
    assert set(cli._LAZY) == set(LAZY)
    own = (cli.lazy_command(name).help or "").strip().split("\n\n")[0]
    assert " ".join(own.split()) == cli._LAZY[name].help


@pytest.mark.parametrize(("name", "sub"), [("fn", "corpus"), ("advisor", "drift")])
def test_a_lazy_group_still_shows_and_runs_its_subcommands(name: str, sub: str) -> None:
    result = CliRunner().invoke(cli.app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert sub in result.output


def test_importing_the_judge_imports_no_statistics_or_model_client(tmp_path: Path) -> None:
    assert _loaded_after("import speedproof.judge.patches", tmp_path, names=MEASURING) == []


@pytest.fixture(scope="module")
def textstat_without_interpreter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """textstat, with a manifest naming a Python that does not exist: any toolchain lookup
    fails, so a verdict proves none happened."""
    repo = materialise(get_example("textstat"), tmp_path_factory.mktemp("startup"))
    manifest = repo / "speedproof.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace('language = "python"\n', 'language = "python"\ninterpreter = "/nowhere/py"\n')
    )
    commit_all(repo, "no interpreter")
    return repo


def test_a_guard_reject_builds_nothing_and_looks_for_no_toolchain(
    textstat_without_interpreter: Path, tmp_path: Path
) -> None:
    repo = textstat_without_interpreter
    patch = get_example("textstat").folder / "patches" / "attack-edit-test.patch"
    ledger = tmp_path / "ledger"
    loaded = _loaded_after(
        "from speedproof.cli import main\nmain()",
        tmp_path,
        "judge",
        str(patch),
        "-m",
        str(repo),
        "--ledger",
        str(ledger),
        "--json",
        names=MEASURING,
    )
    assert loaded == []
    with sqlite3.connect(ledger / "ledger.sqlite") as db:
        (verdict,) = db.execute("SELECT verdict FROM verdicts").fetchone()
        gates = [row[0] for row in db.execute("SELECT name FROM gates ORDER BY id")]
        commands = db.execute("SELECT COUNT(*) FROM commands").fetchone()[0]
        facts = json.loads(db.execute("SELECT facts FROM candidates").fetchone()[0])
    assert verdict == "rejected"
    assert gates == ["guard"]
    assert commands == 0
    assert "toolchain" not in facts
    worktrees = git(repo, "worktree", "list", "--porcelain")
    assert worktrees.count("worktree ") == 1
