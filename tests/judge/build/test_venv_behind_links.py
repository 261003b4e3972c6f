"""A venv reached through a linked folder builds and runs in the sandbox.

The shape a user met: the project's `.venv` is a link to a venv kept elsewhere
(`.venv -> ../envs/x`), and that venv's `bin/python` is itself a link to the system's
`/usr/bin/python3.11`. The venv is made by `python -m venv` in a fresh folder under /tmp (which
the sandbox's private /tmp hides unless speedproof binds it), moved, and linked; the target is
built by the real Python toolchain under real bubblewrap, and the built program runs there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.link_paths import visited_links
from speedproof.manifest_loading import load_manifest
from support.toolchain import checkout, make_repo, sandbox, toolchain

SYSTEM_PYTHON = "/usr/bin/python3.11"
FILES = {
    "tiny/__init__.py": "",
    "tiny/__main__.py": "import sys\nprint('tiny', sys.prefix)\n",
    "speedproof.toml": (
        '[target]\nname = "tiny"\nlanguage = "python"\nmodule = "tiny"\n'
        'interpreter = ".venv/bin/python"\n\n'
        '[tests]\nrunner = "pytest"\nargs = ["tests"]\n\n'
        '[[workloads]]\nid = "w"\n\n[instructions]\nenabled = false\n'
    ),
}

pytestmark = pytest.mark.skipif(
    not os.access(SYSTEM_PYTHON, os.X_OK), reason=f"needs {SYSTEM_PYTHON}"
)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A fresh folder under /tmp, outside every repository and outside pytest's tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="speedproof-linked-venv-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _linked_venv(outside: Path, repo: Path) -> Path:
    """`repo/.venv -> ../envs/x`, a venv made elsewhere and moved there; its bin/python."""
    made = outside / "made" / "x"
    subprocess.run(
        [SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(made)], check=True, timeout=120
    )
    (outside / "envs").mkdir()
    shutil.move(str(made), str(outside / "envs" / "x"))
    (repo / ".venv").symlink_to(Path("..") / "envs" / "x")
    return repo / ".venv" / "bin" / "python"


def test_every_link_on_the_way_to_the_interpreter_is_found_folder_links_too(
    outside: Path,
) -> None:
    repo = outside / "repo"
    repo.mkdir()
    python = _linked_venv(outside, repo)

    found = visited_links(python)

    assert found[0] == repo / ".venv"
    assert found[-1].resolve() == Path(SYSTEM_PYTHON).resolve()
    assert Path(os.path.realpath(python)) == Path(SYSTEM_PYTHON).resolve()


def test_a_venv_behind_a_linked_folder_builds_and_runs_in_the_sandbox(
    outside: Path, tmp_path: Path
) -> None:
    repo, revision = make_repo(outside / "repo", FILES)
    python = _linked_venv(outside, repo)
    manifest = load_manifest(repo).manifest
    assert manifest.target.interpreter == str(python)
    tree = checkout(repo, revision, "baseline", tmp_path / "baseline")

    built = toolchain(manifest).build(tree)

    assert "execvp" not in built.log, built.log
    assert built.ok and built.program is not None, built.log
    program = built.program
    argv = sandbox().wrap(program.argv, cwd=program.root, spec=program.spec())
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"tiny {repo / '.venv'}\n", ran.stdout
