"""Real projects from outside this repository, judged as a user would judge them.

    PATH=.venv/bin:$PATH .venv/bin/python benchmarks/outside_targets.py [--only NAME] [--work DIR]

Two command-line programs nobody here wrote, each set up the way the README's first project is:
the source in a fresh git repository, `speedproof init . -- COMMAND` for the manifest (used as it
comes, but for the Python interpreter, which must have pytest), then `speedproof judge PATCH
--json` for each patch in `benchmarks/outside/` named after the target, every defence on:

- sqlparse 0.5.3, the PyPI sdist (`pip download --no-binary :all:`): `python -m sqlparse -r -k
  upper` over 107 KB of stored procedures made of its own test files. The real win: reindenting
  read the whole statement again for every token; the candidate reads back to the last line
  break. The behaviour change: the same, with each line's trailing blanks dropped before its
  length is taken (indentation moves on 30 of the workload's lines).
- digraph from golang.org/x/tools (Debian's `golang-golang-x-tools-dev`): `digraph transpose`
  over a module graph of 12,000 nodes drawn from a fixed seed. The real win: one write a line
  buffered. The behaviour change: the same, with self-loops dropped from the transpose.

Prints one row a judgement: verdict, the change on the workload it rests on, the first reason
and the judge's seconds. Needs the network to PyPI and Debian's archive, and root for nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
PATCHES = HERE / "outside"
SQLPARSE = "sqlparse==0.5.3"
# The stored procedures and functions of sqlparse's own tests; huge_select.sql is left out, as
# one run of it takes minutes.
SQL_FILES = (
    "function_psql.sql",
    "casewhen_procedure.sql",
    "mysql_handler.sql",
    "function.sql",
    "begintag.sql",
)
SQL_COPIES = 30
GRAPH_NODES = 12_000
GRAPH_SEED = 11


def run(cmd: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, check=True, text=True, capture_output=True, **kwargs)


def commit(repo: Path, message: str) -> None:
    run(["git", "add", "-A"], repo)
    who = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    run(["git", *who, "commit", "-qm", message], repo)


def speedproof() -> str:
    found = shutil.which("speedproof")
    if found is None:
        sys.exit("speedproof is not on PATH: run with PATH=.venv/bin:$PATH")
    return found


def unpacked_sdist(work: Path, requirement: str, pattern: str) -> Path:
    """The PyPI sdist of `requirement` (its file matching `pattern`), unpacked in `work`."""
    download = work / "download"
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "-d", str(download), requirement], work)  # fmt: skip
    sdist = next(download.glob(pattern))
    with tarfile.open(sdist) as archive:
        archive.extractall(work, filter="data")
    return work / sdist.name.removesuffix(".tar.gz")


def setup_sqlparse(work: Path) -> Path:
    repo = unpacked_sdist(work, SQLPARSE, "sqlparse-*.tar.gz")
    (repo / "bench").mkdir()
    text = "".join((repo / "tests" / "files" / name).read_text() for name in SQL_FILES)
    (repo / "bench" / "procs.sql").write_text(text * SQL_COPIES)
    venv = work / "venv"
    run([sys.executable, "-m", "venv", str(venv)], work)
    run([str(venv / "bin" / "pip"), "install", "-q", "pytest"], work)
    run(["git", "init", "-q"], repo)
    commit(repo, "sqlparse 0.5.3")
    command = ["python", "-m", "sqlparse", "-r", "-k", "upper", "bench/procs.sql"]
    run([speedproof(), "init", ".", "--", *command], repo)
    manifest = repo / "speedproof.toml"
    lines = manifest.read_text().splitlines(keepends=True)
    manifest.write_text(
        "".join(
            f'interpreter = "{venv / "bin" / "python"}"\n' if x.startswith("interpreter =") else x
            for x in lines
        )
    )
    commit(repo, "speedproof manifest")
    return repo


def module_graph() -> str:
    rng = random.Random(GRAPH_SEED)
    owners = ("github.com/acme", "github.com/zeta", "golang.org/x", "example.org/lib")
    letters = "abcdefghijklmnopqrstuvwxyz"
    nodes = [
        f"{rng.choice(owners)}/{''.join(rng.choice(letters) for _ in range(rng.randint(3, 9)))}/{n}"
        for n in range(GRAPH_NODES)
    ]
    lines = []
    for node in nodes:
        successors = [nodes[j] for j in rng.sample(range(GRAPH_NODES), rng.randint(1, 14))]
        lines.append(" ".join([node, *successors]))
    return "\n".join(lines) + "\n"


def setup_digraph(work: Path) -> Path:
    run(["apt-get", "download", "-q", "golang-golang-x-tools-dev"], work)
    deb = next(work.glob("golang-golang-x-tools-dev_*.deb"))
    run(["dpkg-deb", "-x", str(deb), str(work / "extracted")], work)
    tools = work / "extracted" / "usr" / "share" / "gocode" / "src" / "golang.org" / "x" / "tools"
    repo = work / "digraph"
    repo.mkdir()
    for source in (tools / "cmd" / "digraph").glob("*.go"):
        shutil.copy(source, repo)
    shutil.copy(work / "extracted" / "usr" / "share" / "doc" / deb.name.split("_")[0] / "copyright",
                repo / "COPYRIGHT")  # fmt: skip
    (repo / "go.mod").write_text("module golang.org/x/tools/cmd/digraph\n\ngo 1.21\n")
    (repo / "data").mkdir()
    (repo / "data" / "modules.txt").write_text(module_graph())
    run(["git", "init", "-q"], repo)
    commit(repo, "digraph from golang.org/x/tools")
    run([speedproof(), "init", ".", "--stdin", "data/modules.txt", "--", "digraph", "transpose"],
        repo)  # fmt: skip
    commit(repo, "speedproof manifest")
    return repo


TARGETS: dict[str, Callable[[Path], Path]] = {"sqlparse": setup_sqlparse, "digraph": setup_digraph}


def judge(repo: Path, patch: Path) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    done = subprocess.run(
        [speedproof(), "judge", str(patch), "--manifest", str(repo / "speedproof.toml"), "--json"],
        cwd=repo,
        text=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    try:
        return json.loads(done.stdout), seconds
    except json.JSONDecodeError:
        return {
            "verdict": f"error (exit {done.returncode})",
            "reasons": [done.stderr[-300:]],
        }, seconds


def change_on(outcome: dict[str, Any]) -> str:
    rests = outcome.get("rests_on")
    for c in outcome.get("comparisons", []):
        if c.get("workload") == rests and c.get("metric") == "wall":
            return f"{c.get('delta_pct') or 0.0:+.2f} %"
    return "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(TARGETS))
    parser.add_argument("--work", type=Path, help="keep the set-up here (default: a temporary one)")
    args = parser.parse_args()
    table = Table("target", "patch", "verdict", "wall change", "first reason", "seconds")
    with tempfile.TemporaryDirectory(prefix="speedproof-outside-") as scratch:
        work = args.work or Path(scratch)
        for name, setup in TARGETS.items():
            if args.only not in (None, name):
                continue
            (work / name).mkdir(parents=True, exist_ok=True)
            repo = setup(work / name)
            for patch in sorted(PATCHES.glob(f"{name}-*.patch")):
                outcome, seconds = judge(repo, patch)
                reasons = outcome.get("reasons") or [""]
                row = (name, patch.stem, outcome.get("verdict", "?"), change_on(outcome))
                table.add_row(*row, reasons[0][:160], f"{seconds:.0f}")
                # Each judgement as it ends too: a later set-up that fails loses nothing.
                print(json.dumps({"row": row, "reasons": reasons, "seconds": round(seconds)}))
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
