"""Run-time attacks on what outlives a run: the interpreter's caches and the clock.

Each test is an attack a hostile candidate can write, run for real through the toolchain and
bubblewrap: the candidate's code tries to poison something a later run or a later baseline would
read, or to make its own run look shorter, and the test shows that nothing it did reaches the
judge.
"""

from __future__ import annotations

import json
import sys
import sysconfig
import textwrap
from pathlib import Path

from speedproof.ground.process import run_process
from speedproof.ground.toolchain import Tree
from support.toolchain import (
    PYTHON_FILES,
    PYTHON_MANIFEST,
    checkout,
    make_repo,
    manifest,
    sandbox,
    toolchain,
)

# Imported by the package under test, so it runs inside the candidate's test process: it tries
# to plant byte-code where any later Python run would load it from, and says what happened.
_POISON = textwrap.dedent(
    """
    import errno, json, os, sys, sysconfig
    _tried = {}
    for folder in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]):
        target = os.path.join(folder, "__pycache__", "speedproof_poison.cpython-311.pyc")
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(b"poison")
            _tried[folder] = "wrote"
        except OSError as exc:
            _tried[folder] = errno.errorcode.get(exc.errno, str(exc.errno))
    with open("poison-tried.json", "w") as _handle:
        json.dump(_tried, _handle)
    """
)


def _poisoned_tree(tmp_path: Path) -> Tree:
    files = dict(PYTHON_FILES)
    files["textpkg/__init__.py"] = files.get("textpkg/__init__.py", "") + _POISON
    repo, revision = make_repo(tmp_path / "repo", files)
    return checkout(repo, revision, "candidate", tmp_path / "candidate")


def test_a_candidates_tests_cannot_plant_byte_code_in_the_interpreters_folders(
    tmp_path: Path,
) -> None:
    tree = _poisoned_tree(tmp_path)
    tc = toolchain(manifest(PYTHON_MANIFEST, 'runner = "pytest"\nargs = ["tests"]'))
    paths = sysconfig.get_paths()

    run = tc.run_tests(tree.checked())

    record = tree.root / "poison-tried.json"
    assert record.is_file(), run.log[-2000:]
    tried = json.loads(record.read_text())
    assert set(tried.values()) == {"EROFS"}, tried
    for folder in (paths["stdlib"], paths["purelib"]):
        assert not (Path(folder) / "__pycache__" / "speedproof_poison.cpython-311.pyc").exists()


_CLOCK = textwrap.dedent(
    """
    import errno, time
    try:
        time.clock_settime(time.CLOCK_REALTIME, 0.0)
        said = "set"
    except OSError as exc:
        said = errno.errorcode.get(exc.errno, str(exc.errno))
    print(said)
    """
)


def test_a_run_cannot_set_the_clock(tmp_path: Path) -> None:
    # The wall figure is taken by the runner, outside the run, whatever the run does to its
    # clocks; benchmarks/clock_attack.py prints that figure for a run that also sleeps.
    ran = run_process(
        [sys.executable, "-I", "-c", _CLOCK],
        cwd=tmp_path,
        sandbox=sandbox(),
        spec=toolchain(manifest(PYTHON_MANIFEST, 'runner = "pytest"'))
        .context.program(Tree("candidate", tmp_path, tmp_path, tmp_path / "out"), ("python",))
        .spec(),
        timeout_s=30,
    )

    assert ran.exit_code == 0, ran.tail()
    assert ran.stdout.strip() == b"EPERM"
