"""`speedproof manifest validate` refuses what cannot work: run as a user runs it, on real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SPEEDPROOF = [sys.executable, "-m", "speedproof"]

TARGET = '[target]\nname = "tiny"\nlanguage = "python"\nmodule = "tiny"\n'
TESTS = '\n[tests]\nrunner = "pytest"\nargs = ["tests"]\n'
WORKLOAD = '\n[[workloads]]\nid = "words"\nargs = ["--top", "3", "data/words.txt"]\n'
FILES = {
    "tiny/__init__.py": "",
    "tiny/__main__.py": "print('tiny')\n",
    "data/words.txt": "a b c\n",
}


def _project(folder: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    for name, text in {**FILES, **(files or {}), "speedproof.toml": manifest}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def _validate(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPEEDPROOF, "manifest", "validate", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "COLUMNS": "400"},
    )


def _problems(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 3, done.stdout + done.stderr
    assert "valid" not in done.stdout
    return " ".join(done.stderr.split())


def test_a_python_target_whose_names_all_exist_is_valid(tmp_path: Path) -> None:
    done = _validate(_project(tmp_path, TARGET + TESTS + WORKLOAD))
    assert done.returncode == 0, done.stderr
    assert "valid" in done.stdout


def test_missing_input_files_and_stdin_are_named_by_key_and_line(tmp_path: Path) -> None:
    workload = WORKLOAD + 'files = ["data/words.txt", "data/gone.txt"]\nstdin = "data/in.txt"\n'
    said = _problems(_validate(_project(tmp_path, TARGET + TESTS + workload)))
    assert "`workloads.0.files` (line 13)" in said
    assert f"input 'data/gone.txt' does not exist at {tmp_path / 'data/gone.txt'}" in said
    assert "`workloads.0.stdin` (line 14)" in said and "'data/in.txt'" in said
    assert "2 problem(s)" in said


def test_path_like_arguments_must_exist_and_other_tokens_are_left_alone(tmp_path: Path) -> None:
    args = '["--top", "30", "title", "--pattern=a/b", "GET /api", "data/nope.txt", "counts.csv"]'
    workload = f'\n[[workloads]]\nid = "words"\nargs = {args}\n'
    said = _problems(_validate(_project(tmp_path, TARGET + TESTS + workload)))
    assert "`workloads.0.args` (line 12)" in said
    assert "argument 'data/nope.txt' looks like a path" in said
    assert "argument 'counts.csv' looks like a path" in said
    assert "2 problem(s)" in said


def test_a_relative_interpreter_that_does_not_exist_says_where_it_looked(tmp_path: Path) -> None:
    target = TARGET + 'interpreter = ".venv/bin/python"\n'
    said = _problems(_validate(_project(tmp_path, target + TESTS + WORKLOAD)))
    assert (
        "`target.interpreter` (line 5): interpreter '.venv/bin/python' (resolved to "
        f"{tmp_path}/.venv/bin/python) does not exist; create the venv or set [target] "
        "interpreter"
    ) in said


def test_an_interpreter_that_cannot_run_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "bin" / "python"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'No module named encodings' >&2\nexit 1\n")
    broken.chmod(0o755)
    target = TARGET + 'interpreter = "bin/python"\n'
    said = _problems(_validate(_project(tmp_path, target + TESTS + WORKLOAD)))
    assert f"interpreter '{broken}' cannot run (No module named encodings)" in said


def test_a_misspelled_module_is_not_found_in_the_source_roots(tmp_path: Path) -> None:
    target = TARGET.replace('module = "tiny"', 'module = "tinny"')
    said = _problems(_validate(_project(tmp_path, target + TESTS + WORKLOAD)))
    assert "`target.module` (line 4): module 'tinny' is neither in the source roots" in said
    assert "fix [target] module or source_roots" in said


def test_a_package_without_main_cannot_be_run_with_dash_m(tmp_path: Path) -> None:
    target = TARGET.replace('module = "tiny"', 'module = "lib"')
    project = _project(tmp_path, target + TESTS + WORKLOAD, {"lib/__init__.py": ""})
    said = _problems(_validate(project))
    assert "with no __main__.py, which `python -m` cannot run" in said


def test_a_missing_script_is_named(tmp_path: Path) -> None:
    target = TARGET.replace('module = "tiny"', 'script = "bin/tiny.py"')
    said = _problems(_validate(_project(tmp_path, target + TESTS + WORKLOAD)))
    assert "`target.script` (line 4): script 'bin/tiny.py' does not exist" in said


GO_MANIFEST = (
    '[target]\nname = "hello"\nlanguage = "go"\npackage = "."\n'
    '\n[tests]\nrunner = "go"\n\n[[workloads]]\nid = "plain"\n'
)
GO_MAIN = 'package main\n\nimport "example.com/x"\n\nfunc main() { x.Run() }\n'


def test_a_go_module_with_dependencies_neither_vendored_nor_cached_is_refused(
    tmp_path: Path,
) -> None:
    files = {
        "go.mod": "module example.com/hello\n\ngo 1.22\n\nrequire example.com/x v1.0.0\n",
        "main.go": GO_MAIN,
    }
    said = _problems(_validate(_project(tmp_path, GO_MANIFEST, files)))
    assert "`target.package` (line 4)" in said
    assert "neither vendored nor in the module cache" in said and "example.com/x" in said
    assert "run `go mod vendor` or `go mod download` first" in said


def test_a_go_module_with_only_the_standard_library_is_valid(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/hello\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }\n',
    }
    done = _validate(_project(tmp_path, GO_MANIFEST, files))
    assert done.returncode == 0, done.stderr
