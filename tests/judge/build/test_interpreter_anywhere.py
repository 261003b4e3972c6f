"""A target's own interpreter, wherever its venv lives: judged for real, under bubblewrap.

The venvs are made with `python -m venv` in fresh folders under /tmp, outside any repository,
which the sandbox's private /tmp hides unless speedproof binds them. They are made without pip
and reach pytest through a `.pth` line naming speedproof's own site-packages (bound already, as
the Python running speedproof), so no package is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.toolchain import resolve_interpreter
from speedproof.manifest_loading import load_manifest

SPEEDPROOF = [sys.executable, "-m", "speedproof"]

FILES = {
    "tiny/__init__.py": "",
    "tiny/__main__.py": "import sys\nprint(len(sys.argv) - 1, sys.prefix)\n",
    "tests/test_tiny.py": "import sys\n\n\ndef test_adds():\n    assert 1 + 1 == 2\n",
}
PATCH = """\
--- a/tiny/__main__.py
+++ b/tiny/__main__.py
@@ -1,2 +1,3 @@
 import sys
+# A comment: the same program.
 print(len(sys.argv) - 1, sys.prefix)
"""


def _manifest(interpreter: str) -> str:
    return (
        f'[target]\nname = "tiny"\nlanguage = "python"\nmodule = "tiny"\n'
        f'interpreter = "{interpreter}"\n\n'
        '[tests]\nrunner = "pytest"\nargs = ["tests"]\n\n'
        '[[workloads]]\nid = "two"\nargs = ["a", "b"]\n\n'
        "[instructions]\nenabled = false\n"
    )


@pytest.fixture
def outside() -> Iterator[Path]:
    """A fresh folder under /tmp, outside every repository and outside pytest's tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="speedproof-venv-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _venv(python: str, folder: Path) -> Path:
    subprocess.run([python, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    (purelib,) = (folder / "lib").glob("python3*/site-packages")
    (purelib / "speedproof_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return folder / "bin" / "python"


def _base_python() -> str:
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _repo(folder: Path, interpreter: str) -> Path:
    for name, text in {**FILES, "speedproof.toml": _manifest(interpreter)}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "tiny"]):
        subprocess.run([*git, *argv], cwd=folder, check=True, capture_output=True)
    return folder


def _judge(repo: Path, ledger: Path) -> subprocess.CompletedProcess[str]:
    patch = ledger.parent / "comment.patch"
    patch.write_text(PATCH)
    argv = ["judge", str(patch), "-m", str(repo), "--pairs", "4", "--json", "--ledger", str(ledger)]
    return subprocess.run(
        [*SPEEDPROOF, *argv], capture_output=True, text=True, timeout=600, check=False
    )


def _gates_passed(done: subprocess.CompletedProcess[str]) -> dict[str, bool]:
    assert "execvp" not in done.stdout + done.stderr, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    return {gate["name"]: gate["passed"] for gate in answer["gates"]}


def _assert_built_tested_and_ran(done: subprocess.CompletedProcess[str]) -> None:
    gates = _gates_passed(done)
    for name in ("build-baseline", "build", "tests", "behaviour"):
        assert gates.get(name) is True, (name, done.stdout[-3000:], done.stderr[-3000:])
    assert any(name.startswith("measure:") for name in gates), gates


# 8 s each, a whole judgement; the relative spelling is also anchored by the loading test below.
@pytest.mark.parametrize("spelling", ["absolute", pytest.param("relative", marks=pytest.mark.slow)])
def test_a_venv_under_tmp_outside_the_repository_builds_tests_and_runs_in_the_sandbox(
    outside: Path, tmp_path: Path, spelling: str
) -> None:
    python = _venv(_base_python(), outside / "venv")
    repo_folder = outside / "repo"
    named = str(python) if spelling == "absolute" else os.path.relpath(python, repo_folder)
    repo = _repo(repo_folder, named)

    done = _judge(repo, tmp_path / "ledger")

    _assert_built_tested_and_ran(done)


def test_a_venv_made_from_a_python_reached_through_a_link_is_visible_link_by_link(
    outside: Path, tmp_path: Path
) -> None:
    # venv/bin/python3 -> links/python3 -> the real binary: every hop must exist inside.
    links = outside / "links"
    links.mkdir()
    (links / "python3").symlink_to(_base_python())
    python = _venv(str(links / "python3"), outside / "venv")
    assert os.readlink(python.parent / "python3") == str(links / "python3")
    repo = _repo(outside / "repo", str(python))

    done = _judge(repo, tmp_path / "ledger")

    _assert_built_tested_and_ran(done)


def test_a_relative_interpreter_is_anchored_at_the_manifests_folder_when_loaded(
    tmp_path: Path,
) -> None:
    (tmp_path / "speedproof.toml").write_text(_manifest(".venv/bin/python"))

    target = load_manifest(tmp_path).manifest.target

    assert target.interpreter == str(tmp_path.resolve() / ".venv" / "bin" / "python")
    assert target.interpreter_written == ".venv/bin/python"


def test_a_missing_venv_says_what_was_looked_for_and_how_to_fix_it(tmp_path: Path) -> None:
    (tmp_path / "speedproof.toml").write_text(_manifest(".venv/bin/python"))
    manifest = load_manifest(tmp_path).manifest

    with pytest.raises(InfrastructureError) as caught:
        resolve_interpreter(manifest)

    resolved = tmp_path.resolve() / ".venv" / "bin" / "python"
    assert str(caught.value) == (
        f"interpreter '.venv/bin/python' (resolved to {resolved}) does not exist; "
        "create the venv or set [target] interpreter"
    )


def test_a_venv_whose_python_is_gone_says_the_link_is_broken(outside: Path) -> None:
    links = outside / "links"
    links.mkdir()
    (links / "python3").symlink_to(_base_python())
    python = _venv(str(links / "python3"), outside / "venv")
    (links / "python3").unlink()
    (outside / "speedproof.toml").write_text(_manifest(str(python)))

    with pytest.raises(InfrastructureError) as caught:
        resolve_interpreter(load_manifest(outside).manifest)

    assert str(caught.value).startswith(f"interpreter '{python}' is a link to nothing")
    assert "recreate the venv or set [target] interpreter" in str(caught.value)
