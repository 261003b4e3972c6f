"""What `speedproof init` derives from the one command it is given: a second representative
workload, a holdout outside the repository, twins, a spread marked as a guess, and one list of
what it could not derive; and that the manifest, unedited and committed, carries a verdict.

The projects are real: the bundled examples copied with their manifests removed, and logtop
(`support.init_project`), each a fresh git repository under /tmp, read by the real command line.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.manifest_loading import parse_manifest
from support.init_project import LOGTOP, access_log, commit, json_of, lay_out, speedproof

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOLDOUT_FOLDER = "-speedproof-holdout"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder under /tmp outside every repository: init writes the holdout beside the project."""
    folder = Path(tempfile.mkdtemp(prefix="speedproof-derive-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _example(name: str, outside: Path) -> Path:
    """The bundled example `name` as a user would meet it: no manifest, committed."""
    repo = outside / name
    shutil.copytree(EXAMPLES / name, repo, ignore=shutil.ignore_patterns("speedproof.toml"))
    commit(repo, name)
    return repo


def _logtop(outside: Path) -> Path:
    repo = lay_out(outside / "logtop", LOGTOP)
    access_log(repo / "data" / "access.log", 40_000)
    commit(repo, "logtop")
    return repo


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def test_init_on_textstat_adds_the_file_beside_its_input_a_holdout_outside_and_twins(
    outside: Path,
) -> None:
    repo = _example("textstat", outside)

    done = speedproof(
        repo, "init", "--json", "--no-run", "--", "python", "-m", "textstat", "--top", "30",
        "data/novel.txt",
    )  # fmt: skip

    answer = json_of(done)
    assert done.returncode == 0, answer
    manifest = parse_manifest((repo / "speedproof.toml").read_text())
    tiers = {w.id: (w.tier, w.args) for w in manifest.workloads}
    assert tiers == {
        "novel": ("representative", ["--top", "30", "data/novel.txt"]),
        "forum-export": ("representative", ["--top", "30", "data/forum-export.txt"]),
        "novel-holdout": ("holdout", ["--top", "30", "{holdout}/novel.txt"]),
    }
    assert manifest.holdout.dir == f"../textstat{HOLDOUT_FOLDER}"
    holdout = outside / f"textstat{HOLDOUT_FOLDER}" / "novel.txt"
    original = repo / "data" / "novel.txt"
    assert holdout.read_bytes() != original.read_bytes()
    assert _lines(holdout) == _lines(original)
    text = (repo / "speedproof.toml").read_text()
    assert "# Derived by init: the same command on data/forum-export.txt, another .txt" in text
    assert text.count('twin = "mutated"') == 2
    assert "its twin is mutated: data/novel.txt is text (lines)" in " ".join(text.split())
    validated = speedproof(repo, "manifest", "validate", "speedproof.toml")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_a_lone_input_gets_a_mutated_copy_beside_it_as_the_second_workload(
    outside: Path,
) -> None:
    repo = _logtop(outside)

    done = speedproof(
        repo, "init", "--json", "--no-run", "--", "./logtop", "-top", "5", "data/access.log"
    )

    answer = json_of(done)
    assert done.returncode == 0, answer
    manifest = parse_manifest((repo / "speedproof.toml").read_text())
    representative = [(w.id, w.files) for w in manifest.workloads if w.tier == "representative"]
    assert representative == [
        ("access", ["data/access.log"]),
        ("access-mutated", ["data/access-mutated.log"]),
    ]
    written = repo / "data" / "access-mutated.log"
    original = repo / "data" / "access.log"
    assert written.read_bytes() != original.read_bytes()
    assert _lines(written) == _lines(original)
    assert [w.id for w in manifest.workloads if w.tier == "holdout"] == ["access-holdout"]
    assert any("data/access-mutated.log" in line for line in answer["advice"])
    validated = speedproof(repo, "manifest", "validate", "speedproof.toml")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_what_init_could_not_derive_is_listed_at_the_end_of_its_output_and_in_the_manifest(
    outside: Path,
) -> None:
    repo = _logtop(outside)
    shutil.copy(repo / "data" / "access.log", repo / "data" / "yesterday.log")

    done = speedproof(
        repo, "init", "--no-run", "--", "./logtop", "data/access.log", "data/yesterday.log"
    )

    tail = done.stdout[done.stdout.index("could not derive:") :]
    assert "a second workload, a holdout and twins: the command names 2 inputs" in " ".join(
        tail.split()
    )
    assert "ready to judge" in tail
    text = (repo / "speedproof.toml").read_text()
    assert "# What init could not derive:\n# - a second workload, a holdout and twins" in text
    assert not (outside / f"logtop{HOLDOUT_FOLDER}").exists()


def _init_and_commit(repo: Path) -> str:
    done = speedproof(repo, "init", "--", "./logstat", "-top", "15", "data/shop-2024-03-11.log")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    commit(repo, "the manifest speedproof init wrote")
    return done.stdout


def _judged(repo: Path, patch: str) -> dict[str, object]:
    done = speedproof(
        repo, "judge", str(repo / "patches" / patch), "--manifest", "speedproof.toml", "--json",
        "--ledger", str(repo.parent / "ledger"),
    )  # fmt: skip
    return json_of(done)


@pytest.mark.slow
def test_init_s_manifest_on_logstat_unedited_accepts_a_real_speedup(outside: Path) -> None:
    repo = _example("logstat", outside)

    said = _init_and_commit(repo)
    answer = _judged(repo, "speedup-hoist-regexp.patch")

    assert "(5 pairs, a guess)" in said
    assert "robust spread" in (repo / "speedproof.toml").read_text()
    assert answer["verdict"] == "accepted", (answer["reasons"], answer.get("message"))


@pytest.mark.slow
def test_init_s_manifest_on_logstat_unedited_rejects_a_behaviour_change_its_input_hides(
    outside: Path,
) -> None:
    """The shop log is in UTC, so reading hours in UTC changes nothing there: only the API log
    beside it (UTC+1), the second workload init derived, shows the change."""
    repo = _example("logstat", outside)

    _init_and_commit(repo)
    answer = _judged(repo, "behaviour-utc-hours.patch")

    assert answer["verdict"] == "rejected", (answer["reasons"], answer.get("message"))
    assert "api-2024-03-12" in str(answer["reasons"])


def test_a_go_project_s_benchmarks_become_the_workloads_of_a_manifest_of_their_own(
    outside: Path,
) -> None:
    repo = _logtop(outside)

    done = speedproof(
        repo, "init", "--json", "--no-run", "--", "./logtop", "-top", "5", "data/access.log"
    )

    answer = json_of(done)
    assert answer["bench_manifest"] == str(repo / "speedproof-bench.toml")
    bench = parse_manifest((repo / "speedproof-bench.toml").read_text())
    assert [(w.id, w.bench, w.package) for w in bench.workloads] == [
        ("normalise", "BenchmarkNormalise", ".")
    ]
    assert bench.reported is not None and bench.reported.primary == "ns_per_op"
    validated = speedproof(repo, "manifest", "validate", "speedproof-bench.toml")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_a_second_input_whose_name_reads_as_the_same_id_gets_its_own(outside: Path) -> None:
    repo = lay_out(outside / "logtop", LOGTOP)
    access_log(repo / "data" / "access.1.log", 2_000)
    access_log(repo / "data" / "access.2.log", 3_000)
    commit(repo, "logtop")

    done = speedproof(repo, "init", "--no-run", "--", "./logtop", "data/access.1.log")

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    manifest = parse_manifest((repo / "speedproof.toml").read_text())
    assert [(w.id, w.files) for w in manifest.workloads if w.tier == "representative"] == [
        ("access", ["data/access.1.log"]),
        ("access-2", ["data/access.2.log"]),
    ]


LINECOUNT = {
    "go.mod": "module example.com/linecount\n\ngo 1.22\n",
    "main.go": """\
// linecount counts the lines of a file, and refuses one that says it is broken.
package main

import (
\t"bytes"
\t"fmt"
\t"os"
)

func main() {
\tdata, err := os.ReadFile(os.Args[1])
\tif err != nil || bytes.Contains(data, []byte("broken")) {
\t\tfmt.Fprintln(os.Stderr, "cannot read", os.Args[1])
\t\tos.Exit(2)
\t}
\tfmt.Println(bytes.Count(data, []byte("\\n")))
}
""",
}


def test_a_derived_workload_whose_baseline_fails_is_left_out_and_named(outside: Path) -> None:
    repo = lay_out(outside / "linecount", LINECOUNT)
    (repo / "data").mkdir()
    (repo / "data" / "good.txt").write_text("a line of words\n" * 20_000)
    (repo / "data" / "other.txt").write_text("a broken line\n" * 20_000)
    commit(repo, "linecount")

    done = speedproof(repo, "init", "--json", "--", "./linecount", "data/good.txt")

    answer = json_of(done)
    assert done.returncode == 0, (answer["first_run"], answer["could_not_derive"])
    manifest = parse_manifest((repo / "speedproof.toml").read_text())
    assert [w.id for w in manifest.workloads] == ["good", "good-holdout"]
    (dropped,) = answer["could_not_derive"]
    assert dropped.startswith("workload other (the same command on data/other.txt")
    assert "its baseline run failed, so it was left out" in dropped
