"""`speedproof init` on real-shaped projects: real git repositories, a real venv, real `go build`
and bubblewrap, the real command line in a subprocess.

The Python project is a src-layout package with a console script and pytest configured in
pyproject.toml; its venv lives under /tmp outside the repository and is "activated" the way a
shell does it (its bin first on PATH, VIRTUAL_ENV set). It is made without pip and reaches pytest
through a `.pth` line naming speedproof's own site-packages, so nothing is downloaded. The Go
module has two main packages (the tool and its data generator) and a benchmark. Assertions are on
behaviour, never on time: what a workload measured is printed by the benchmark of the README.
"""

from __future__ import annotations

import os
import random
import shutil
import site
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from speedproof.init.detect import detect_project
from speedproof.init.length import classify
from speedproof.init.write import toml_value
from speedproof.manifest import Runner
from speedproof.manifest_loading import parse_manifest
from support.init_project import (
    GO_PATH,
    HOIST_PATCH,
    LOGTOP,
    access_log,
    commit,
    json_of,
    lay_out,
    speedproof,
)

WORDFREQ = {
    "pyproject.toml": """\
[project]
name = "wordfreq"
version = "0.1.0"

[project.scripts]
wordfreq = "wordfreq.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
""",
    "src/wordfreq/__init__.py": "",
    "src/wordfreq/cli.py": """\
import argparse

STOP = ["the", "a", "an", "and", "of", "to", "in", "is", "it", "that"]


def count(lines):
    counts = {}
    for line in lines:
        for word in line.lower().split():
            if word in STOP:
                continue
            counts[word] = counts.get(word, 0) + 1
    return counts


def main():
    parser = argparse.ArgumentParser(prog="wordfreq")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("path")
    options = parser.parse_args()
    with open(options.path, encoding="utf-8") as source:
        counts = count(source)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    for word, n in ranked[: options.top]:
        print(f"{n:7d} {word}")


if __name__ == "__main__":
    main()
""",
    "tests/test_count.py": """\
from wordfreq.cli import count


def test_stop_words_are_not_counted():
    assert count(["the cat and the hat", "a cat"]) == {"cat": 2, "hat": 1}
""",
    "tests/test_speed.py": """\
import pytest

pytest.importorskip("pytest_benchmark")

from wordfreq.cli import count


def test_count_speed(benchmark):
    benchmark(count, ["the cat and the hat"] * 100)
""",
}


def _words(path: Path, lines: int) -> None:
    """A Zipf-ish text of `lines` lines of 12 words, the same every time."""
    draw = random.Random(7)
    vocabulary = [f"w{i}" for i in range(4000)] + ["the", "and", "of", "a"] * 200
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    drawn = draw.choices(vocabulary, weights, k=12 * lines)
    text = [" ".join(drawn[at : at + 12]) for at in range(0, len(drawn), 12)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A fresh folder under /tmp, outside every repository and outside pytest's tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="speedproof-init-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _venv(folder: Path) -> Path:
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    (purelib,) = (folder / "lib").glob("python3*/site-packages")
    (purelib / "speedproof_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return folder


def _activated(venv: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{venv / 'bin'}:{GO_PATH}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


@pytest.fixture
def wordfreq(outside: Path) -> tuple[Path, Path]:
    """(the repository, its venv outside it)."""
    repo = lay_out(outside / "wordfreq", WORDFREQ)
    _words(repo / "data" / "words.txt", 40_000)
    commit(repo, "wordfreq")
    return repo, _venv(outside / "venv")


@pytest.fixture
def logtop(tmp_path: Path) -> Path:
    repo = lay_out(tmp_path / "logtop", LOGTOP)
    access_log(repo / "data" / "access.log", 40_000)
    commit(repo, "logtop")
    return repo


@pytest.mark.slow
def test_init_finds_the_console_script_the_pytest_setup_and_the_venv_outside_the_repository(
    wordfreq: tuple[Path, Path],
) -> None:
    repo, venv = wordfreq
    env = _activated(venv)

    done = speedproof(
        repo, "init", "--json", "--", "wordfreq", "--top", "20", "data/words.txt", env=env
    )

    answer = json_of(done)
    assert done.returncode == 0, (answer["validation"], answer["first_run"], done.stderr[-2000:])
    project = answer["project"]
    assert project["language"] == "python"
    assert project["source_roots"] == ["src"]
    (entry,) = project["entry_points"]
    assert (entry["name"], entry["target"]) == ("wordfreq", {"module": "wordfreq.cli"})
    assert project["interpreter"] == str(venv / "bin" / "python3")
    assert "active virtual environment" in project["interpreter_note"]
    assert (project["tests"]["runner"], project["tests"]["args"]) == ("pytest", ["tests"])
    assert [b["name"] for b in project["benchmarks"]] == ["test_count_speed"]
    workload = answer["workload"]
    assert workload["args"] == ["--top", "20", "data/words.txt"]
    assert workload["files"] == ["data/words.txt"]
    first = answer["first_run"]
    assert first["ok"] and first["build_ok"] and first["sandbox"] == "bwrap"
    timing = first["workloads"][0]
    assert timing["id"] == "words"
    assert timing["status"] in ("long enough", "too short"), timing
    assert timing["runs"] >= 2 and timing["median_ms"] > 0
    assert answer["valid"] is True
    validated = speedproof(repo, "manifest", "validate", "speedproof.toml", env=env)
    assert validated.returncode == 0, validated.stderr


@pytest.mark.slow
def test_init_finds_the_main_packages_and_benchmarks_of_a_go_module_and_the_manifest_validates(
    logtop: Path,
) -> None:
    done = speedproof(logtop, "init", "--json", "--", "./logtop", "-top", "5", "data/access.log")

    answer = json_of(done)
    assert done.returncode == 0, (answer["validation"], answer["first_run"], done.stderr[-2000:])
    project = answer["project"]
    found = {e["name"]: e["target"] for e in project["entry_points"]}
    assert found == {"logtop": {"package": "."}, "gen": {"package": "./tools/gen"}}
    assert [b["name"] for b in project["benchmarks"]] == ["BenchmarkNormalise"]
    assert (project["tests"]["runner"], project["tests"]["args"]) == ("go", ["./..."])
    assert answer["first_run"]["ok"] and answer["valid"] is True
    manifest = parse_manifest((logtop / "speedproof.toml").read_text())
    assert manifest.target.package == "."
    assert manifest.workloads[0].files == ["data/access.log"]
    text = (logtop / "speedproof.toml").read_text()
    assert "BenchmarkNormalise (main_test.go:11)" in text
    assert 'Another entry point: gen (package main in ./tools/gen): package = "./tools/gen"' in text
    validated = speedproof(logtop, "manifest", "validate", str(logtop))
    assert validated.returncode == 0, validated.stderr


@pytest.mark.slow
def test_a_real_speedup_judged_through_the_manifest_init_wrote_is_accepted(logtop: Path) -> None:
    done = speedproof(logtop, "init", "--json", "--", "./logtop", "-top", "5", "data/access.log")
    assert done.returncode == 0, done.stdout[-3000:]
    commit(logtop, "the manifest speedproof init wrote")
    patch = logtop.parent / "hoist.patch"
    patch.write_text(HOIST_PATCH)

    judged = speedproof(
        logtop, "judge", str(patch), "--manifest", "speedproof.toml", "--json",
        "--ledger", str(logtop.parent / "ledger"),
    )  # fmt: skip

    answer = json_of(judged)
    assert answer["verdict"] == "accepted", (answer["reasons"], answer.get("message"))
    assert judged.returncode == 0
    # Both representative workloads (the log and init's mutated copy of it) show the win.
    assert answer["rests_on"] in ("access", "access-mutated")


def test_init_refuses_to_overwrite_a_manifest_unless_forced(logtop: Path) -> None:
    manifest = logtop / "speedproof.toml"
    manifest.write_text("# the user's own\n")

    refused = speedproof(logtop, "init", "--json", "--no-run", "--", "./logtop", "data/access.log")

    assert refused.returncode == 2
    error = json_of(refused)
    assert (error["verdict"], error["kind"], error["exit_code"]) == ("error", "UsageProblem", 2)
    assert "--force" in error["message"]
    assert manifest.read_text() == "# the user's own\n"
    forced = speedproof(
        logtop, "init", "--json", "--no-run", "--force", "--", "./logtop", "data/access.log"
    )
    assert forced.returncode == 0, forced.stdout[-2000:]
    assert parse_manifest(manifest.read_text()).workloads[0].id == "access"


def test_without_a_command_init_builds_and_leaves_a_workload_to_fill_in(logtop: Path) -> None:
    done = speedproof(logtop, "init", "--json")

    answer = json_of(done)
    assert done.returncode == 1
    assert answer["first_run"]["build_ok"] is True
    assert answer["first_run"]["workloads"] == []
    assert answer["valid"] is False and "workloads" in answer["validation"]
    assert "# [[workloads]]" in (logtop / "speedproof.toml").read_text()


def test_a_command_that_names_no_entry_point_is_bad_usage_and_writes_nothing(
    wordfreq: tuple[Path, Path],
) -> None:
    repo, venv = wordfreq
    (repo / "src" / "wordfreq" / "__main__.py").write_text(
        "from wordfreq.cli import main\n\nmain()\n"
    )

    done = speedproof(repo, "init", "--no-run", "--", "sqlformat", "big.sql", env=_activated(venv))

    assert done.returncode == 2
    assert "`sqlformat` is none of the project's entry points (wordfreq" in done.stderr
    assert not (repo / "speedproof.toml").exists()


def test_a_console_script_that_python_dash_m_would_not_call_is_named_as_a_problem(
    tmp_path: Path,
) -> None:
    files = dict(WORDFREQ)
    files["src/wordfreq/cli.py"] = files["src/wordfreq/cli.py"].split("\n\nif __name__")[0] + "\n"
    repo = lay_out(tmp_path / "wordfreq", files)

    project = detect_project(repo)

    (entry,) = project.entry_points
    assert "would import wordfreq.cli and call nothing" in entry.problem
    assert 'if __name__ == "__main__": main()' in entry.problem


def test_a_folder_of_unittest_cases_without_pytest_configuration_gets_the_unittest_runner(
    tmp_path: Path,
) -> None:
    repo = lay_out(
        tmp_path / "tool",
        {
            "setup.py": "from setuptools import setup\n\nsetup(name='tool', packages=['tool'])\n",
            "tool/__init__.py": "",
            "tool/__main__.py": "print('tool')\n",
            "tests/test_tool.py": (
                "import unittest\n\n\nclass ToolTest(unittest.TestCase):\n"
                "    def test_runs(self):\n        self.assertTrue(True)\n"
            ),
        },
    )

    project = detect_project(repo)

    assert project.name == "tool"
    assert [(e.name, e.target) for e in project.entry_points] == [("tool", {"module": "tool"})]
    if "unittest" in get_args(Runner):
        assert project.tests.runner == "unittest"
        assert project.tests.args == ("discover", "-s", "tests", "-t", ".")
    else:
        assert project.tests.runner in ("pytest", "command")


def test_values_with_quotes_backslashes_and_control_characters_survive_the_manifest() -> None:
    tricky = ['say "hi"', "C:\\data\\x.txt", "tab\there", "bell\x07", "del\x7f", "ünï"]

    parsed = tomllib.loads(f"args = {toml_value(tricky)}\n")

    assert parsed["args"] == tricky


@pytest.mark.parametrize(
    ("median_s", "startup_s", "expected"),
    [(0.020, 0.015, "too short"), (0.100, 0.050, "too short"), (0.200, 0.050, "long enough")],
)
def test_a_workload_is_too_short_when_start_up_is_half_of_it_or_more(
    median_s: float, startup_s: float, expected: str
) -> None:
    status, message = classify(median_s, startup_s, 5.0, 3.0, (5, 50))

    assert status == expected, message
    if expected == "too short":
        assert "a 6% win in the program's own code would read under the 3% accept floor" in message
