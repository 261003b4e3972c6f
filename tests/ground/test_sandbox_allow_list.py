"""A candidate's run sees only what the target needs: an attack that goes looking for secrets.

Under the old sandbox (`/` bound read-only, only /tmp replaced) a built program could read the
judging user's home folder, the user's repository and its `.git`, speedproof's caches, the ledger
and the other side's worktree. Here a real Python target, built by the real toolchain, runs in
real bubblewrap and tries to open a planted secret in each of those places: every attempt must
end in ENOENT (the place does not exist inside), never a permission error that would leak that
it exists. The worktree it runs from must be readable and read-only.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from speedproof.ground.process import run_process
from speedproof.ground.program import Program, output_path
from speedproof.ground.sandbox import mount_list
from speedproof.judge.behaviour.outputs import clear_outputs, place_outputs, read_outputs
from speedproof.judge.build.factory import toolchain_for
from support.toolchain import (
    PYTHON_FILES,
    PYTHON_MANIFEST,
    checkout,
    make_repo,
    manifest,
    sandbox,
)

# Opens each path given and prints, as JSON, what came of it: the file's text or the errno name.
_PROBE = """
import errno, json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        with open(path) as handle:
            seen[path] = "read: " + handle.read()[:40]
    except OSError as exc:
        seen[path] = errno.errorcode.get(exc.errno, str(exc.errno))
try:
    with open(os.path.join(os.getcwd(), "planted-by-run"), "w") as handle:
        handle.write("x")
    seen["write-worktree"] = "wrote"
except OSError as exc:
    seen["write-worktree"] = errno.errorcode.get(exc.errno, str(exc.errno))
with open("/tmp/scratch", "w") as handle:
    seen["write-tmp"] = "wrote"
print(json.dumps(seen))
"""


@pytest.fixture
def home_secret() -> Iterator[Path]:
    """A secret in the home folder of the user running the judge, removed afterwards."""
    path = Path.home() / f".speedproof-test-secret-{uuid.uuid4().hex}"
    path.write_text("home secret")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _plant(folder: Path, name: str = "secret.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"secret in {folder.name}")
    return path


def _probe(program: Program, paths: list[Path]) -> dict[str, str]:
    interpreter = program.argv[0]
    ran = run_process(
        [interpreter, "-I", "-c", _PROBE, *(str(p) for p in paths)],
        cwd=program.root,
        sandbox=sandbox(),
        spec=program.spec(),
        timeout_s=60,
    )
    assert ran.exit_code == 0, ran.tail()
    seen: dict[str, str] = json.loads(ran.stdout)
    return seen


def test_a_built_program_cannot_find_any_secret_outside_its_allow_list(
    tmp_path: Path, home_secret: Path
) -> None:
    repo, revision = make_repo(tmp_path / "repo", PYTHON_FILES)
    candidate = checkout(repo, revision, "candidate", tmp_path / "candidate")
    baseline = checkout(repo, revision, "baseline", tmp_path / "baseline")
    caches = tmp_path / "cache"
    tc = toolchain_for(manifest(PYTHON_MANIFEST, 'runner = "pytest"'), sandbox(), caches=caches)
    built = tc.build(candidate.checked())
    assert built.ok and built.program is not None, built.log
    secrets = [
        home_secret,
        _plant(repo),
        repo / ".git" / "config",
        _plant(caches),
        _plant(tmp_path / "ledger"),
        _plant(baseline.worktree),
        Path("/etc/shadow"),
        Path("/root/.bash_history"),
    ]

    seen = _probe(built.program, [*secrets, candidate.root / "textpkg" / "core.py"])

    for secret in secrets:
        assert seen[str(secret)] == "ENOENT", (secret, seen[str(secret)])
    assert seen[str(candidate.root / "textpkg" / "core.py")].startswith("read: ")
    assert seen["write-worktree"] == "EROFS"
    assert seen["write-tmp"] == "wrote"
    assert not (candidate.root / "planted-by-run").exists()


def test_the_mount_list_names_every_folder_a_run_sees_and_nothing_else(tmp_path: Path) -> None:
    repo, revision = make_repo(tmp_path / "repo", PYTHON_FILES)
    candidate = checkout(repo, revision, "candidate", tmp_path / "candidate")
    tc = toolchain_for(
        manifest(PYTHON_MANIFEST, 'runner = "pytest"'), sandbox(), caches=tmp_path / "cache"
    )
    built = tc.build(candidate.checked())
    assert built.program is not None, built.log

    mounts = mount_list(built.program.spec())

    assert f"ro {candidate.worktree.resolve()}" in mounts
    assert f"ro {candidate.out.resolve()}" in mounts
    assert "ro /" not in mounts
    assert not any(line.startswith("rw ") for line in mounts)
    # Of the caches, only the read-only mirror of the interpreter's own byte-code is seen
    # (docs/adr/0061): it is made from the installed interpreter, never from a worktree.
    cache = str(tmp_path / "cache")
    seen = [line for line in mounts if cache in line]
    assert all(line.startswith("ro ") and "pycache-mirror" in line for line in seen), seen
    assert not any(str(repo) in line for line in mounts)


def test_a_sandboxed_run_writes_its_output_files_to_a_copy_outside_its_read_only_tree(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    program = replace(
        Program(side="candidate", root=tree, argv=("/bin/sh", "-c"), readable=(tree,)),
        outputs=tmp_path / "outputs",
        output_files=("out/result.txt", "never.txt"),
    )
    place_outputs(program)
    clear_outputs(program, program.output_files)
    script = "echo done > out/result.txt && (echo x > stray.txt || true)"

    ran = run_process(
        [*program.argv, script], cwd=tree, sandbox=sandbox(), spec=program.spec(), timeout_s=30
    )
    found = {o.digest.path: o for o in read_outputs(program, program.output_files)}

    assert ran.exit_code == 0, ran.tail()
    assert found["out/result.txt"].content == b"done\n"
    assert found["never.txt"].digest.kind == "absent"
    assert (tree / "out" / "result.txt").read_bytes() == b""  # the placeholder, untouched
    assert not (tree / "stray.txt").exists()
    assert output_path(program, "out/result.txt").is_relative_to(tmp_path / "outputs")
    clear_outputs(program, program.output_files)
    again = read_outputs(program, program.output_files)
    assert [o.digest.kind for o in again] == ["absent", "absent"]
