"""Twins, generated inputs and holdout inputs outside the repository, on a real tiny target.

The target prints the name of the file it reads beside a count of its lines, so a twin's output
differs from its original's and must be compared baseline against candidate. Every run goes
through bubblewrap; the generator runs in it like a build.
"""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from speedproof.calibration.trials import CalibrateOptions, Calibration
from speedproof.campaign.stability import check_stability
from speedproof.ground.errors import InfrastructureError, ManifestError
from speedproof.ground.program import Program
from speedproof.ground.sandbox import make_sandbox
from speedproof.ground.toolchain import Tree
from speedproof.judge.build.factory import toolchain_for
from speedproof.judge.evaluate import Judge, JudgeOptions
from speedproof.judge.inputs.twins import make_twin
from speedproof.judge.inputs.unseen import unseen_inputs
from speedproof.ledger import Ledger
from speedproof.manifest import Workload
from speedproof.manifest_loading import load_manifest, parse_manifest
from support.git import git
from support.toy_target import toy_manifest, toy_target, workload_table

TOOL = """\
import sys

path = sys.argv[1]
with open(path, encoding="utf-8") as handle:
    lines = handle.read().splitlines()
print(f"{path}: {len(lines)} lines, {sum(len(line) for line in lines)} characters")
"""
GENERATOR = """\
import argparse
import pathlib
import random

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--out", required=True)
given = parser.parse_args()
rng = random.Random(given.seed)
out = pathlib.Path(given.out)
(out / "input.txt").write_text("".join(f"{rng.random()}\\n" for _ in range(2000)))
(out / "seed.txt").write_text(str(given.seed))
"""
MANIFEST = toy_manifest(
    workload_table("visible", "data/visible.txt", files=["data/visible.txt"]),
    workload_table(
        "fresh",
        "{out}/input.txt",
        generate=["python3", "gen.py", "--seed", "{seed}", "--out", "{out}"],
    ),
    workload_table("hidden", "{holdout}/hidden.txt", tier="holdout"),
    name="tiny",
    language="python",
    policy="pairs = 4",
)
NOOP = """\
diff --git a/tool.py b/tool.py
--- a/tool.py
+++ b/tool.py
@@ -4,3 +4,4 @@ path = sys.argv[1]
 with open(path, encoding="utf-8") as handle:
     lines = handle.read().splitlines()
 print(f"{path}: {len(lines)} lines, {sum(len(line) for line in lines)} characters")
+# Counts lines and characters.
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    repo = tmp_path / "tiny"
    files = {"tool.py": TOOL, "gen.py": GENERATOR, "data/visible.txt": "one\ntwo\nthree\n" * 500}
    return toy_target(repo, MANIFEST, files)


@pytest.fixture
def holdout(tmp_path: Path) -> Path:
    folder = tmp_path / "outside" / "holdout"
    folder.mkdir(parents=True)
    (folder / "hidden.txt").write_text("alpha\nbeta\n" * 300)
    return folder


def _manifest_error(text: str) -> str:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, "m.toml")
    return str(caught.value)


def test_a_generator_that_does_not_name_its_out_folder_is_refused_with_its_line() -> None:
    message = _manifest_error(MANIFEST.replace('"--out", "{out}"', '"--out", "x"'))
    assert "`workloads.1.generate` (line 18)" in message
    assert "a generator must name the folder it writes as {out}" in message


def test_out_in_the_args_of_a_workload_without_a_generator_is_refused() -> None:
    text = MANIFEST.replace(
        'generate = ["python3", "gen.py", "--seed", "{seed}", "--out", "{out}"]\n', ""
    )
    assert "the workload needs `generate`" in _manifest_error(text)


def test_only_a_holdout_workload_may_read_holdout_inputs() -> None:
    text = MANIFEST.replace(
        'tier = "holdout"\nargs = ["{holdout}', 'tier = "stress"\nargs = ["{holdout}'
    )
    assert "only a holdout workload may read {holdout} inputs" in _manifest_error(text)


def test_the_holdout_folder_and_input_specific_are_manifest_keys() -> None:
    text = MANIFEST.replace("[policy]", '[holdout]\ndir = "../elsewhere"\n\n[policy]').replace(
        'files = ["data/visible.txt"]', 'files = ["data/visible.txt"]\ninput_specific = true'
    )
    manifest = parse_manifest(text)
    assert manifest.holdout.dir == "../elsewhere"
    assert manifest.rules().input_specific == ("visible",)
    assert "`holdout.colour` (line 27): unknown key" in _manifest_error(
        text.replace('dir = "../elsewhere"', 'colour = "red"')
    )


def test_a_twin_reads_fresh_read_only_copies_under_random_names(tmp_path: Path) -> None:
    root = tmp_path / "target"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("x,y\n1,2\n")
    (root / "data" / "b.txt").write_text("stdin\n")
    workload = Workload(
        id="w",
        args=["--top", "3", "data/a.csv", "data/a.csv.bak"],
        files=["data/a.csv"],
        stdin="data/b.txt",
        twin="copy",
    )
    twin = make_twin(workload, root, tmp_path / "twin")
    assert twin is not None
    assert (twin.id, twin.tier) == ("w~twin", "holdout")
    copy = Path(twin.args[2])
    assert twin.args[:2] == ["--top", "3"] and twin.args[3] == "data/a.csv.bak"
    assert copy.parent == tmp_path / "twin" and copy.name != "a.csv" and copy.suffix == ".csv"
    assert copy.read_bytes() == (root / "data" / "a.csv").read_bytes()
    assert not copy.stat().st_mode & stat.S_IWUSR
    assert twin.stdin is not None and Path(twin.stdin).read_text() == "stdin\n"
    again = make_twin(workload, root, tmp_path / "again")
    assert again is not None and again.args[2] != twin.args[2]


def test_a_workload_that_declares_no_input_has_no_twin(tmp_path: Path) -> None:
    assert make_twin(Workload(id="w", args=["--version"]), tmp_path, tmp_path / "t") is None


def test_each_unseen_folder_is_shown_only_to_the_workload_that_reads_it(
    tiny: Path, holdout: Path, tmp_path: Path
) -> None:
    loaded = load_manifest(tiny)
    context = toolchain_for(loaded.manifest, make_sandbox()).context
    tree = Tree("baseline", tiny, tiny, tmp_path / "out")
    program = Program("baseline", tiny, (sys.executable, "tool.py"))
    with unseen_inputs(
        loaded, context=context, baseline=tree, seed=1234, holdout_dir=holdout
    ) as inputs:
        by_id = {w.id: w for w in inputs.workloads}
        assert list(by_id) == ["visible", "fresh", "hidden", "visible~twin"]
        generated = Path(by_id["fresh"].args[0])
        assert generated.is_file() and (generated.parent / "seed.txt").read_text() == "1234"
        hidden = Path(by_id["hidden"].args[0])
        assert hidden.read_bytes() == (holdout / "hidden.txt").read_bytes()
        assert not hidden.is_relative_to(holdout), "runs read a fresh copy, never the user's folder"
        seen = {wid: inputs.visible(program, w).readable for wid, w in by_id.items()}
        assert seen["visible"] == ()
        assert seen["fresh"] == (generated.parent,)
        assert seen["hidden"] == (hidden.parent,)
        assert seen["visible~twin"] == (Path(by_id["visible~twin"].args[0]).parent,)
    assert not generated.exists() and not hidden.exists()


def test_a_judgement_generates_its_inputs_from_a_recorded_seed_and_judges_the_twin(
    tiny: Path, holdout: Path, tmp_path: Path
) -> None:
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        judge = Judge(
            load_manifest(tiny),
            sandbox=make_sandbox(),
            ledger=ledger,
            options=JudgeOptions(instructions=False, holdout_dir=holdout),
        )
        outcome = judge.judge(NOOP)
        record = ledger.show(outcome.ledger_id)
    assert outcome.verdict.verdict == "inconclusive", outcome.verdict.reasons
    gates = {g["name"]: g for g in record["gates"]}
    seed = record["facts"]["unseen_inputs"]["seed"]
    assert gates["generate:fresh"]["detail"]["seed"] == seed
    assert str(seed) in gates["generate:fresh"]["detail"]["argv"]
    assert gates["inputs"]["detail"]["twins"] == ["visible~twin"]
    behaviour = gates["behaviour"]["detail"]["workloads"]
    assert [line.split(" ")[0] for line in behaviour] == [
        "visible",
        "fresh",
        "hidden",
        "visible~twin",
    ]
    assert all(": match" in line for line in behaviour), behaviour


def test_a_holdout_workload_without_a_holdout_folder_stops_the_judgement(
    tiny: Path, tmp_path: Path
) -> None:
    with Ledger.in_folder(tmp_path / "ledger") as ledger:
        judge = Judge(
            load_manifest(tiny),
            sandbox=make_sandbox(),
            ledger=ledger,
            options=JudgeOptions(instructions=False),
        )
        with pytest.raises(InfrastructureError, match="--holdout-dir DIR"):
            judge.judge(NOOP)


def test_a_campaign_checks_the_base_against_itself_on_the_same_unseen_inputs(
    tiny: Path, holdout: Path
) -> None:
    result = check_stability(
        load_manifest(tiny),
        sandbox=make_sandbox(),
        repo=tiny,
        rev="HEAD",
        progress=lambda stage, message: None,
        holdout_dir=holdout,
    )
    assert result.verdict == "inconclusive", result.reasons
    assert result.pairs == 4


@pytest.mark.slow
def test_calibrate_measures_the_judges_workloads_with_the_manifests_holdout_folder(
    tiny: Path, holdout: Path
) -> None:
    manifest = tiny / "speedproof.toml"
    manifest.write_text(
        manifest.read_text().replace("[policy]", f'[holdout]\ndir = "{holdout}"\n\n[policy]')
    )
    git(tiny, "commit", "-qam", "holdout folder")
    report = Calibration(
        load_manifest(tiny), sandbox=make_sandbox(), options=CalibrateOptions(trials=1)
    ).run()
    assert [t.kind for t in report.trials] == ["a/a", "null", "win"]
    assert all(t.pairs == 4 for t in report.trials), report.trials


@pytest.mark.parametrize("command", ["judge", "verify", "optimize"])
def test_every_judging_command_takes_a_holdout_folder(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "speedproof", command, "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert "--holdout-dir" in done.stdout
