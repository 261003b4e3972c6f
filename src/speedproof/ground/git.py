"""Running git and GNU patch one way everywhere: a clean environment, bytes in, named errors."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from speedproof.ground.errors import InfrastructureError

# Generous: `git worktree add` on a large repository checks out every file; a hung git is a bug
# we want reported, not waited on forever.
GIT_TIMEOUT_S = 600.0

# Repository hooks (post-checkout runs on `worktree add`) are the user's code, not ours; they
# must not run, or mutate, a tree we are about to judge.
_GIT_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fileMode=true")

# Variables that steer patch behaviour (POSIX mode picks file names differently, backups, RCS).
_PATCH_VARIABLES = (
    "POSIXLY_CORRECT",
    "PATCH_GET",
    "PATCH_VERSION_CONTROL",
    "VERSION_CONTROL",
    "SIMPLE_BACKUP_SUFFIX",
    "QUILT_PATCHES",
)


@dataclass(frozen=True)
class CommandRun:
    """One command speedproof ran, and what it answered."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self) -> str:
        said = (self.stderr.strip() or self.stdout.strip() or "(no output)").splitlines()
        return f"`{' '.join(self.argv)}` exited {self.returncode}: " + " / ".join(said[:8])


def clean_env() -> dict[str, str]:
    """The caller's environment without anything that redirects git or changes patch.

    GIT_DIR, GIT_INDEX_FILE or GIT_WORK_TREE inherited from, say, a hook would point every
    command at another repository; C messages keep error texts stable.
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in _PATCH_VARIABLES
    }
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_tool(
    argv: Sequence[str], cwd: Path, *, stdin: bytes | None = None, timeout: float = GIT_TIMEOUT_S
) -> tuple[CommandRun, bytes]:
    """Run `argv` in `cwd`; return the record and the raw stdout bytes (paths may be non-UTF-8)."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=clean_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise InfrastructureError(f"`{argv[0]}` is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise InfrastructureError(f"`{' '.join(argv)}` took longer than {timeout:.0f} s") from exc
    record = CommandRun(
        argv=tuple(argv),
        returncode=done.returncode,
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
    )
    return record, done.stdout


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> tuple[CommandRun, bytes]:
    """Run `git <args>` in `cwd` with hooks off; never raises on a non-zero exit."""
    return run_tool(("git", *_GIT_CONFIG, *args), cwd, stdin=stdin)


def git_ok(cwd: Path, *args: str) -> bytes:
    """Run git and return stdout; a non-zero exit is an InfrastructureError naming the command."""
    record, out = git(cwd, *args)
    if not record.ok:
        raise InfrastructureError(record.describe())
    return out


def decode_path(raw: bytes) -> str:
    """A path as git printed it; undecodable bytes survive as surrogates, never get dropped."""
    return raw.decode("utf-8", "surrogateescape")


def repository_root(path: Path) -> Path:
    """The top of the git working tree containing `path`; a named error if there is none."""
    if not path.is_dir():
        raise InfrastructureError(f"{path}: no such folder, so not a git repository")
    record, out = git(path, "rev-parse", "--show-toplevel")
    if not record.ok:
        raise InfrastructureError(f"{path} is not inside a git working tree: {record.describe()}")
    return Path(decode_path(out.rstrip(b"\n"))).resolve()
