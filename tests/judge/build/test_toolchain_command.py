"""The command toolchain: the manifest's own build and test commands, and toolchain choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import run_process
from speedproof.ground.toolchain import Tree
from speedproof.judge.build.command import CommandBuilder, CommandTests
from speedproof.judge.build.go import GoBuilder
from speedproof.judge.build.python import PytestTests
from support.toolchain import (
    GO_MANIFEST,
    manifest,
    sandbox,
    toolchain,
    tree_of,
)

FILES = {
    "build.sh": "#!/bin/sh\nset -e\nmkdir -p bin\n"
    "printf '#!/bin/sh\\necho built \"$@\"\\n' > bin/hello\nchmod +x bin/hello\n",
    "check.sh": '#!/bin/sh\nif [ "$(bin/hello x)" = "built x" ]; then echo ok; else echo wrong; '
    "exit 1; fi\n",
    ".gitignore": "bin/\n",
}
TARGET = 'name = "hello"\nlanguage = "command"\nbuild = ["sh", "build.sh"]\nprogram = "bin/hello"'
TESTS = 'runner = "command"\nargs = ["sh", "check.sh"]'


def test_a_command_target_builds_with_its_own_command_and_runs_its_program(
    tmp_path: Path,
) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")

    built = toolchain(manifest(TARGET, TESTS)).build(tree)

    assert built.ok, built.log
    assert built.commands == (("sh", "build.sh"),)
    program = built.program
    assert program is not None
    assert program.argv == (str(tree.root.resolve() / "bin" / "hello"),)
    assert program.binary_size == (tree.root / "bin" / "hello").stat().st_size
    assert program.fresh_per_run == (tree.root.resolve() / "bin" / "hello",)
    ran = run_process(
        [*program.argv, "a"], cwd=program.root, sandbox=sandbox(), spec=program.spec(), timeout_s=30
    )
    assert ran.stdout == b"built a\n"


def test_a_program_that_the_build_did_not_make_fails_the_build_by_name(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")
    target = 'name = "hello"\nlanguage = "command"\nprogram = "bin/hello"'

    built = toolchain(manifest(target, TESTS)).build(tree)

    assert not built.ok and built.commands == ()
    assert "'bin/hello'" in built.log


def test_a_program_on_path_needs_no_build(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")
    target = 'name = "cat"\nlanguage = "command"\nprogram = "cat"'

    built = toolchain(manifest(target, TESTS)).build(tree)

    assert built.program is not None and Path(built.program.argv[0]).name == "cat"
    # The machine's own program is shared by both sides and never copied.
    assert built.program.fresh_per_run == ()


def test_a_command_test_runner_is_one_test_passed_or_failed_by_exit_code(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")
    tc = toolchain(manifest(TARGET, TESTS))

    before = tc.run_tests(tree)
    tc.build(tree)
    after = tc.run_tests(tree)

    assert before.ran and before.outcomes == {"command": "failed"}
    assert "bin/hello" in before.failures["command"]
    assert after.outcomes == {"command": "passed"}
    assert tc.run_tests(tree, only=["something else"]).outcomes == {}


def test_a_command_runner_without_a_command_is_an_infrastructure_error(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")
    with pytest.raises(InfrastructureError, match="needs `args`"):
        toolchain(manifest(TARGET, 'runner = "command"')).run_tests(tree)


def test_the_builder_follows_the_language_and_the_runner_follows_the_tests_table() -> None:
    go_with_script = toolchain(manifest(GO_MANIFEST, TESTS))
    assert isinstance(go_with_script.builder, GoBuilder)
    assert isinstance(go_with_script.tests, CommandTests)
    command_with_pytest = toolchain(manifest(TARGET, 'runner = "pytest"'))
    assert isinstance(command_with_pytest.builder, CommandBuilder)
    assert isinstance(command_with_pytest.tests, PytestTests)
    assert command_with_pytest.versions()["sandbox"] == "bwrap"


def test_a_build_folder_inside_the_worktree_is_refused(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, FILES, "candidate")
    inside = Tree(side="candidate", worktree=tree.worktree, root=tree.root, out=tree.root / "out")
    with pytest.raises(InfrastructureError, match="outside the worktree"):
        toolchain(manifest(TARGET, TESTS)).build(inside)
