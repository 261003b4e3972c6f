"""A built Python target runs as an installed copy does: from byte-code compiled at build.

The build compiles the target's modules into its build folder and links the interpreter's own
byte-code beside them; the runs read both (`python -v` says which `.pyc` "matches" its source)
and write nothing, so the baseline no longer compiles its modules on every timed run.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.ground.process import run_process
from speedproof.ground.program import Program
from speedproof.ground.toolchain import Tree
from speedproof.judge.worktree import snapshot
from support.toolchain import (
    PYTEST_TESTS,
    PYTHON_FILES,
    PYTHON_MANIFEST,
    manifest,
    sandbox,
    toolchain,
    tree_of,
)


def _built(tmp_path: Path) -> tuple[Tree, Program]:
    tree = tree_of(tmp_path, PYTHON_FILES)
    built = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS)).build(tree)
    assert built.ok and built.program is not None, built.log
    return tree, built.program


def _imports(program: Program) -> list[str]:
    """The `python -v` lines of one run saying which byte-code matched which source."""
    ran = run_process(
        [program.argv[0], "-v", *program.argv[1:], "one", "two"],
        cwd=program.root,
        sandbox=sandbox(),
        spec=program.spec(),
        timeout_s=30,
    )
    assert ran.exit_code == 0, ran.tail()
    assert ran.stdout == b"2 0\n"
    return [line for line in ran.stderr.decode().splitlines() if " matches " in line]


def test_a_built_programs_run_reads_its_modules_byte_code_from_the_build(tmp_path: Path) -> None:
    tree, program = _built(tmp_path)
    prefix = str(tree.out / "pycache")

    matched = _imports(program)

    core = tree.root.resolve() / "textpkg" / "core.py"
    assert any(line.startswith(f"# {prefix}/") and line.endswith(f" {core}") for line in matched), (
        matched
    )
    assert program.env["PYTHONPYCACHEPREFIX"] == prefix


def test_a_built_programs_run_reads_the_standard_librarys_byte_code_too(tmp_path: Path) -> None:
    # A byte-code prefix replaces every __pycache__ folder: without the interpreter's own
    # byte-code linked into it, every run would compile each standard module it imports.
    _, program = _built(tmp_path)

    matched = _imports(program)

    stdlib = [line for line in matched if "/textpkg/" not in line]
    assert stdlib, matched
    assert all(line.startswith(f"# {program.env['PYTHONPYCACHEPREFIX']}/") for line in stdlib)


def test_a_built_programs_runs_write_no_byte_code(tmp_path: Path) -> None:
    tree, program = _built(tmp_path)
    before = snapshot.take(tree.out), snapshot.take(tree.worktree)

    _imports(program)

    assert snapshot.changed(before[0], snapshot.take(tree.out)) == []
    assert snapshot.changed(before[1], snapshot.take(tree.worktree)) == []


def test_a_tree_built_twice_into_one_build_folder_builds_and_reads_its_byte_code(
    tmp_path: Path,
) -> None:
    tree, _ = _built(tmp_path)

    again = toolchain(manifest(PYTHON_MANIFEST, PYTEST_TESTS)).build(tree)

    assert again.ok and again.program is not None, again.log
    assert any("/textpkg/core.py" in line for line in _imports(again.program))
