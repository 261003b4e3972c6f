"""A command target's own harness: the files its build, test, generator and benchmark commands
name are protected, because no language default knows them.

Real repositories in temporary folders; the guard's two passes run on real patches.
"""

from __future__ import annotations

from pathlib import Path

from speedproof.judge.guard.check import check_applied, check_patch
from speedproof.judge.guard.protected import ProtectedPaths
from speedproof.judge.worktree.apply import apply_patch
from speedproof.judge.worktree.trees import worktree
from speedproof.manifest_loading import load_manifest
from support.workspace import make_repo

FILES = {
    "svc/run.sh": '#!/bin/sh\ncat "$@"\n',
    "svc/check.sh": "#!/bin/sh\n./run.sh data/x.txt | grep -q hello\n",
    "svc/build.sh": "#!/bin/sh\nexit 0\n",
    "svc/gen.py": "print('generated')\n",
    "svc/tools/check.py": "import sys\n",
    "svc/data/x.txt": "hello\n",
    "svc/data/y.txt": "world\n",
    "svc/conf/bench.toml": "n = 1\n",
    "svc/lib.sh": "greet() { echo hi; }\n",
}
MANIFEST = """\
[target]
name = "svc"
language = "command"
build = ["sh", "build.sh"]
program = "run.sh"

[tests]
runner = "command"
args = ["sh", "check.sh"]

[[workloads]]
id = "small"
args = ["data/y.txt", "--config=conf/bench.toml", "missing.txt", "/etc/hostname", "../svc"]

[[workloads]]
id = "fresh"
generate = ["python3", "gen.py", "--out", "{out}"]
args = ["{out}/input.txt"]
"""
REWRITE_CHECK = (
    "diff --git a/svc/check.sh b/svc/check.sh\n--- a/svc/check.sh\n+++ b/svc/check.sh\n"
    "@@ -1,2 +1,2 @@\n #!/bin/sh\n-./run.sh data/x.txt | grep -q hello\n+exit 0\n"
)


def command_repo(tmp_path: Path, manifest: str = MANIFEST) -> Path:
    return make_repo(tmp_path / "repo", {**FILES, "svc/speedproof.toml": manifest})


def protected_for(repo: Path) -> ProtectedPaths:
    return ProtectedPaths.for_manifest(load_manifest(repo / "svc"))


def test_a_patch_rewriting_a_command_targets_test_script_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    repo = command_repo(tmp_path)
    result = check_patch(REWRITE_CHECK, protected_for(repo))
    assert not result.passed
    # One violation per header naming the file (`diff --git`, `---`, `+++`), all the same.
    assert {v.path for v in result.violations} == {"svc/check.sh"}
    assert result.violations[0].detail == (
        "'svc/check.sh' is protected: named by the manifest's test command (`svc/check.sh`), "
        "from the `diff --git` header"
    )


def test_the_second_pass_refuses_the_rewritten_test_script_too(tmp_path: Path) -> None:
    repo = command_repo(tmp_path)
    protected = protected_for(repo)
    with worktree(repo, "HEAD") as tree:
        apply_patch(tree.path, REWRITE_CHECK)
        after = check_applied(tree.path, tree.rev, protected)
    assert not after.passed
    assert "svc/check.sh" in after.summary()


def test_every_file_the_build_test_and_generator_commands_name_is_protected(
    tmp_path: Path,
) -> None:
    protected = protected_for(command_repo(tmp_path))
    expectations = {
        "svc/build.sh": "named by the manifest's build command",
        "svc/check.sh": "named by the manifest's test command",
        "svc/gen.py": "named by the manifest's workload `fresh` generator",
        "svc/data/y.txt": "named by the manifest's workload `small` arguments",
        "svc/conf/bench.toml": "named by the manifest's workload `small` arguments",
    }
    for path, why in expectations.items():
        assert protected.reason(path) == f"{why} (`{path}`)", path


def test_a_test_command_protects_its_script_and_its_input_both(tmp_path: Path) -> None:
    manifest = MANIFEST.replace(
        'args = ["sh", "check.sh"]', 'args = ["python3", "tools/check.py", "--in", "data/x.txt"]'
    )
    protected = protected_for(command_repo(tmp_path, manifest))
    assert "test command" in (protected.reason("svc/tools/check.py") or "")
    assert "test command" in (protected.reason("svc/data/x.txt") or "")


def test_tokens_that_are_not_files_in_the_repository_protect_nothing(tmp_path: Path) -> None:
    protected = protected_for(command_repo(tmp_path))
    # Flags, a missing file, an absolute path, a folder, a placeholder, and the interpreter.
    for path in ("svc/missing.txt", "etc/hostname", "svc", "svc/sh", "svc/python3"):
        assert protected.reason(path) is None, path
    assert protected.reason("svc/lib.sh") is None


def test_the_program_a_timed_target_runs_stays_open_to_patches(tmp_path: Path) -> None:
    # The program is what the candidate makes faster; a script needs no build.
    assert protected_for(command_repo(tmp_path)).reason("svc/run.sh") is None


def test_a_reported_benchmark_protects_its_program_and_prefix(tmp_path: Path) -> None:
    manifest = (
        MANIFEST.replace('program = "run.sh"', 'program = "sh"\nprefix = ["run.sh"]')
        .replace("[[workloads]]", "[behaviour]\ncompare_stdout = false\n\n[[workloads]]", 1)
        .replace("[target]", '[reported]\nprimary = "ops"\ndirection = "higher"\n\n[target]')
    )
    protected = protected_for(command_repo(tmp_path, manifest))
    assert protected.reason("svc/run.sh") == (
        "named by the manifest's reported-metric benchmark command (`svc/run.sh`)"
    )


def test_a_go_or_python_target_gets_no_command_rules(tmp_path: Path) -> None:
    manifest = MANIFEST.replace('language = "command"', 'language = "python"\nscript = "gen.py"')
    protected = protected_for(command_repo(tmp_path, manifest))
    assert protected.reason("svc/check.sh") is None


def test_a_command_naming_a_symbolic_link_protects_the_file_it_leads_to_too(
    tmp_path: Path,
) -> None:
    files = {**FILES, "svc/speedproof.toml": MANIFEST.replace("check.sh", "checks.sh")}
    repo = make_repo(tmp_path / "repo", files, symlinks={"svc/checks.sh": "check.sh"})
    protected = protected_for(repo)
    assert "test command" in (protected.reason("svc/checks.sh") or "")
    assert "test command" in (protected.reason("svc/check.sh") or "")
