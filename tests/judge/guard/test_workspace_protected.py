from __future__ import annotations

from pathlib import Path

import pytest

from speedproof.ground.errors import ManifestError
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.manifest_loading import load_manifest
from support.git import git

GO = ProtectedPaths.build("go")
PYTHON = ProtectedPaths.build("python")
COMMAND = ProtectedPaths.build("command")


@pytest.mark.parametrize(
    "path",
    [
        "go.mod",
        "sub/module/go.mod",
        "go.sum",
        "go.work",
        "go.work.sum",
        "main_test.go",
        "pkg/util_test.go",
        "testdata/x.txt",
        "pkg/testdata/deep/y.bin",
        "vendor/github.com/x/y.go",
        "default.pgo",
        "cmd/app/default.pgo",
    ],
)
def test_go_defaults_protect_tests_testdata_modules_vendor_and_profiles(path: str) -> None:
    assert GO.is_protected(path)


@pytest.mark.parametrize(
    "path",
    [".git", ".git/config", "sub/.git/hooks/pre-commit", ".gitattributes", "a/b/.gitattributes"],
)
def test_git_metadata_is_protected_in_every_language(path: str) -> None:
    for protected in (GO, PYTHON, COMMAND):
        assert protected.is_protected(path)


@pytest.mark.parametrize("path", [".gitmodules", ".ci/run.sh", ".github/workflows/ci.yml"])
def test_ci_and_submodule_configuration_is_protected_in_every_language(path: str) -> None:
    for protected in (GO, PYTHON, COMMAND):
        assert protected.is_protected(path)


@pytest.mark.parametrize(
    "path",
    [
        "test_mod.py",
        "pkg/test_mod.py",
        "pkg/mod_test.py",
        "tests/helpers.py",
        "src/pkg/tests/data/in.txt",
        "test/x.py",
        "conftest.py",
        "pkg/conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "setup.py",
        "pyproject.toml",
        "noxfile.py",
        "requirements.txt",
        "requirements-dev.txt",
        "deps.lock",
        "Pipfile",
        "Pipfile.lock",
        "poetry.lock",
        "uv.lock",
        ".python-version",
    ],
)
def test_python_defaults_protect_tests_configuration_and_pins(path: str) -> None:
    assert PYTHON.is_protected(path)


@pytest.mark.parametrize(
    "path",
    ["main.go", "pkg/util.go", "mytestdata/x.txt", "testdata.go", "Go.mod", "TESTDATA/x", "gitx"],
)
def test_go_source_and_near_misses_are_open(path: str) -> None:
    assert GO.reason(path) is None


@pytest.mark.parametrize(
    "path", ["pkg/mod.py", "pkg/testing.py", "contest.py", "Tests/x.py", "pkg/latest_py.txt"]
)
def test_python_source_and_near_misses_are_open(path: str) -> None:
    assert PYTHON.reason(path) is None


def test_a_command_target_protects_only_the_common_defaults() -> None:
    assert COMMAND.reason("go.mod") is None
    assert COMMAND.reason("tests/test_x.py") is None
    assert COMMAND.is_protected(".github/x")


@pytest.mark.parametrize(
    "path",
    [
        "sitecustomize.py",
        "src/sitecustomize.py",
        "usercustomize.py",
        "pkg/deep/usercustomize.py",
        "hook.pth",
        "src/pkg/_editable.pth",
    ],
)
def test_python_start_up_hooks_are_protected_anywhere_and_named_so(path: str) -> None:
    assert "Python start-up hook" in (PYTHON.reason(path) or ""), path


def test_a_conftest_at_any_depth_is_protected_and_named_so() -> None:
    for path in ("conftest.py", "src/conftest.py", "a/b/c/d/conftest.py"):
        assert "pytest conftest" in (PYTHON.reason(path) or ""), path


def test_a_target_of_any_language_tested_by_pytest_gets_the_python_rules() -> None:
    go_with_pytest = ProtectedPaths.build("go", runner="pytest")
    command_with_pytest = ProtectedPaths.build("command", runner="pytest")
    for rules in (go_with_pytest, command_with_pytest):
        assert "start-up hook" in (rules.reason("sitecustomize.py") or "")
        assert "conftest" in (rules.reason("tools/conftest.py") or "")
        assert rules.is_protected("tests/test_cli.py")
    assert go_with_pytest.is_protected("go.mod")
    # A command target's own test runner leaves its test files open; Python's start-up hooks
    # and plugin metadata are closed for every target (a Python runner may run over any tree).
    command = ProtectedPaths.build("command", runner="command")
    assert command.reason("tests/test_cli.py") is None
    assert "conftest" in (command.reason("conftest.py") or "")
    # Each rule once, even when the language brings it too.
    both = ProtectedPaths.build("python", runner="pytest")
    assert len(both.rules) == len(PYTHON.rules)


def test_the_reason_names_the_rule_that_matched() -> None:
    assert GO.reason("pkg/util_test.go") == "Go test file (`*_test.go`)"
    assert PYTHON.reason("tests/data/x") == "Python test folder (`tests`)"
    assert "git metadata" in (GO.reason("a/.git/config") or "")


def test_matching_ignores_empty_and_dot_components() -> None:
    assert GO.is_protected("./testdata//x.txt")
    assert GO.is_protected("a/./go.mod")


def test_manifest_globs_match_the_path_and_bare_names_any_component() -> None:
    protected = ProtectedPaths.build("command", extra=["fixtures/*.json", "golden", "data/"])
    assert protected.is_protected("fixtures/a.json")
    assert not protected.is_protected("fixtures/a.txt")
    assert protected.is_protected("golden")
    assert protected.is_protected("deep/golden/out.txt")
    assert protected.is_protected("data/big/in.csv")
    assert not protected.is_protected("metadata/in.csv")
    assert "protect.paths" in (protected.reason("golden/x") or "")


def test_a_glob_character_in_the_target_folder_is_taken_literally() -> None:
    protected = ProtectedPaths.build("command", extra=["fixtures/x"], target_dir="svc[1]")
    assert protected.is_protected("svc[1]/fixtures/x")
    assert not protected.is_protected("svc1/fixtures/x")


def test_a_protect_path_outside_the_repository_is_a_manifest_error() -> None:
    with pytest.raises(ManifestError, match="outside the repository"):
        ProtectedPaths.build("command", extra=["../../elsewhere/x"], target_dir="svc")
    with pytest.raises(ManifestError, match="names no path"):
        ProtectedPaths.build("command", extra=["/"])


MANIFEST = """\
[target]
name = "svc"
language = "go"

[tests]
runner = "go"

[[workloads]]
id = "small"
files = ["data/in.txt", "../shared/table.txt", "/usr/share/dict/words"]
stdin = "inputs/stdin.txt"

[protect]
paths = ["fixtures/*.json", "golden", "/cfg/settings.ini"]
"""


def test_a_manifest_in_a_subfolder_protects_repository_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "speedproof.toml").write_text(MANIFEST)
    loaded = load_manifest(tmp_path / "svc")
    protected = ProtectedPaths.for_manifest(loaded, repo_root=tmp_path)
    expectations = {
        "svc/speedproof.toml": "the manifest",
        "svc/data/in.txt": "workload input",
        "svc/inputs/stdin.txt": "workload input",
        "shared/table.txt": "workload input",
        "svc/fixtures/a.json": "protect.paths",
        "svc/cfg/settings.ini": "protect.paths",
        "other/golden/x": "protect.paths",
        "svc/go.mod": "Go module",
    }
    for path, why in expectations.items():
        assert why in (protected.reason(path) or ""), path
    for path in ("speedproof.toml", "data/in.txt", "fixtures/a.json", "svc/main.go"):
        assert protected.reason(path) is None, path


def test_the_repository_root_is_found_with_git_when_not_given(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "speedproof.toml").write_text(MANIFEST)
    protected = ProtectedPaths.for_manifest(load_manifest(tmp_path / "svc"))
    assert protected.is_protected("svc/data/in.txt")
    assert protected.is_protected("svc/speedproof.toml")
