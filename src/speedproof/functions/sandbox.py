"""Run a Python script under bubblewrap with no network, no writable filesystem and hard limits.

Layers, outermost first (each one is tested on its own with a raw script, see test_fn_sandbox):

* bubblewrap: `--unshare-all` (network, pid, ipc, uts, cgroup and user namespaces),
  `--die-with-parent --new-session --cap-drop ALL --clearenv --disable-userns`, uid/gid 65534
  inside. bubblewrap itself is started with SANDBOX_ENVIRONMENT, not the caller's environment:
  its init is pid 1 in the sandbox, and /proc/1/environ is readable from there. The root is an
  empty tmpfs remounted read-only; /usr, the /lib* and /bin links and the Python installation
  are read-only binds; /proc, /dev (remounted read-only) and a 16 MiB tmpfs /tmp (valgrind keeps
  a few small files there) are the only other mounts. There are no writable binds. The script
  and its job reach the sandbox as data copies (`--ro-bind-data`), never as host paths.
* seccomp (`seccomp.py`): fork, vfork, non-thread clone, sockets, ptrace, mount, unshare and a
  few other calls fail with EPERM, whatever the uid.
* rlimits, set by `prlimit` inside the sandbox just before the interpreter: CPU seconds, address
  space, file size, process count (effective only when the caller is not root, see seccomp.py),
  no core files.
* a wall-clock deadline in this process that kills the whole process group, and caps on how many
  bytes of stdout, stderr and the side channel are read before the sandbox is killed.

There is no unsandboxed fallback: a missing tool or a sandbox that does not start raises
SandboxUnavailable.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from speedproof.functions.seccomp import build_filter
from speedproof.ground.errors import SandboxUnavailable

MiB = 1 << 20
SANDBOX_UID = 65534
SCRIPT_PATH = "/sp/main.py"
JOB_PATH = "/sp/job.json"
SIDE_FD_PLACEHOLDER = "{side_fd}"
# Python flags inside the sandbox: -S no site, -P no script directory on sys.path, -B no .pyc
# writes. Not -I, which implies -E and drops PYTHONHASHSEED (see harness.py).
PYTHON_FLAGS = ("-S", "-P", "-B")
# The whole environment of the sandbox, bubblewrap included. bubblewrap's init is pid 1 inside
# and its /proc/1/environ is readable there, so bubblewrap itself starts from this and never
# from the caller's environment, which may hold API keys (ADR 0031). `--clearenv` and `--setenv`
# then give the script exactly the same variables.
SANDBOX_ENVIRONMENT: dict[str, str] = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
}


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    CPU 2 s and 512 MiB are the defaults of a plain run (the nano-agent anchor used 1 s and
    128 MiB; valgrind needs more than 128 MiB to start Python, and `for_valgrind` scales these).
    CPU time is the limit that matters; the 30 s wall clock only catches a run that stops using
    CPU, and is generous because a machine under load (load average 8 on 2 cores was seen while
    this was written) stretches wall time, not CPU time.
    """

    cpu_seconds: int = 2
    address_space: int = 512 * MiB
    file_size: int = 1 * MiB
    processes: int = 4
    wall_seconds: float = 30.0
    stdout_bytes: int = 4 * MiB
    stderr_bytes: int = 256 * 1024
    side_bytes: int = 64 * MiB

    def for_valgrind(self) -> Limits:
        """Limits for a run under Cachegrind.

        Cachegrind with `--cache-sim=no` starts Python in ~1.4 s and runs it ~20-40x slower;
        it maps its own tool, translation cache and the guest into one address space.
        """
        return replace(
            self,
            cpu_seconds=self.cpu_seconds * 40 + 20,
            address_space=self.address_space + 1024 * MiB,
            wall_seconds=self.wall_seconds * 40 + 30,
        )


@dataclass(frozen=True)
class SandboxConfig:
    """Where the tools are. `bwrap` may name any program, which is how tests break the sandbox."""

    bwrap: str = "bwrap"
    python: str = field(default_factory=lambda: base_interpreter())
    prlimit: str = "prlimit"
    extra_ro_binds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What came out of one sandboxed run."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    side: bytes
    timed_out: bool
    capped: str | None
    wall_seconds: float

    @property
    def signal(self) -> int | None:
        """The signal that ended the script, when bubblewrap reports `128 + signal`."""
        if self.exit_code is not None and 128 < self.exit_code < 160:
            return self.exit_code - 128
        return None


def base_interpreter() -> str:
    """The real interpreter behind the running one (a venv's python is a symlink to it)."""
    real = os.path.realpath(sys.executable)
    candidate = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if candidate.exists():
        return str(candidate)
    return real


def _tool(name: str) -> str:
    found = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    if found is None:
        raise SandboxUnavailable(
            f"{name} is not installed; install it (e.g. apt-get install {name})"
        )
    return found


def _setenv_args() -> list[str]:
    args: list[str] = []
    for name, value in SANDBOX_ENVIRONMENT.items():
        args += ["--setenv", name, value]
    return args


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _python_mounts(python: str, extra: Sequence[str]) -> list[str]:
    roots = {sys.base_prefix, sys.base_exec_prefix, str(Path(python).resolve().parent.parent)}
    roots.update(extra)
    args: list[str] = []
    for root in sorted(roots):
        resolved = os.path.realpath(root)
        if resolved == "/usr" or resolved.startswith("/usr/"):
            continue
        args += ["--ro-bind", resolved, resolved]
    return args


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _limit_args(limits: Limits) -> list[str]:
    return [
        f"--cpu={limits.cpu_seconds}",
        f"--as={limits.address_space}",
        f"--fsize={limits.file_size}",
        f"--nproc={limits.processes}",
        "--core=0",
    ]


def build_command(
    config: SandboxConfig,
    limits: Limits,
    fds: dict[str, int],
    wrapper: Sequence[str],
) -> list[str]:
    """The full bwrap command line; `fds` maps script, job, seccomp, status and side to fds."""
    python = config.python
    if not os.path.exists(python):
        raise SandboxUnavailable(f"interpreter {python} does not exist")
    prlimit = _tool(config.prlimit)
    inner = [prlimit, *_limit_args(limits), "--"]
    inner += [part.replace(SIDE_FD_PLACEHOLDER, str(fds["side"])) for part in wrapper]
    inner += [python, *PYTHON_FLAGS, SCRIPT_PATH, JOB_PATH]
    return [
        # Resolved here, against the caller's PATH: bubblewrap's own PATH is the sandbox's.
        shutil.which(config.bwrap) or config.bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        "--clearenv",
        *_setenv_args(),
        *_system_mounts(),
        *_python_mounts(python, config.extra_ro_binds),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(16 * MiB),
        "--tmpfs",
        "/tmp",
        "--ro-bind-data",
        str(fds["script"]),
        SCRIPT_PATH,
        "--ro-bind-data",
        str(fds["job"]),
        JOB_PATH,
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        "/",
        "--seccomp",
        str(fds["seccomp"]),
        "--json-status-fd",
        str(fds["status"]),
        *inner,
    ]


class _Reader:
    """Reads the child's pipes, with byte caps, until they close, a cap or the deadline hits."""

    def __init__(self, pipes: dict[str, int], caps: dict[str, int]) -> None:
        self.selector = selectors.DefaultSelector()
        self.data: dict[str, bytearray] = {name: bytearray() for name in pipes}
        self.caps = caps
        for name, fd in pipes.items():
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ, name)

    def pump(self, deadline: float) -> tuple[bool, str | None]:
        """Returns (timed_out, capped stream or None)."""
        while self.selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True, None
            for key, _ in self.selector.select(timeout=remaining):
                name = str(key.data)
                chunk = os.read(int(key.fd), 1 << 16)
                if not chunk:
                    self.selector.unregister(key.fd)
                    continue
                self.data[name] += chunk
                if len(self.data[name]) > self.caps.get(name, 1 << 30):
                    return False, name
        return False, None

    def close(self) -> None:
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fd)
        self.selector.close()


def _kill(process: subprocess.Popen[bytes]) -> None:
    # bwrap leads its own process group (start_new_session); the sandbox's pid namespace dies
    # with it because its init gets SIGKILL via --die-with-parent.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _exit_code(status: bytes) -> tuple[bool, int | None]:
    """(the sandbox started, the script's exit code) from bwrap's --json-status-fd stream."""
    started, code = False, None
    decoder = json.JSONDecoder()
    text = status.decode("utf-8", "replace")
    position = 0
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        try:
            item, position = decoder.raw_decode(text, position)
        except ValueError:
            break
        if isinstance(item, dict):
            started = started or "child-pid" in item
            if isinstance(item.get("exit-code"), int):
                code = item["exit-code"]
    return started, code


def run_script(
    script: str,
    job: bytes,
    *,
    limits: Limits | None = None,
    config: SandboxConfig | None = None,
    wrapper: Sequence[str] = (),
) -> Outcome:
    """Run `script` (as /sp/main.py, given /sp/job.json) in the sandbox.

    `wrapper` is a command prefix run inside the sandbox between prlimit and Python (setarch and
    valgrind); `{side_fd}` in it becomes a write-only pipe whose content is `Outcome.side`.
    Raises SandboxUnavailable when bwrap, libseccomp or a tool is missing or the sandbox does
    not start.
    """
    limits = limits or Limits()
    config = config or SandboxConfig()
    program = build_filter()  # before any fd is opened: it raises when libseccomp is missing
    fds = {"script": _memfd("script", script.encode()), "job": _memfd("job", job)}
    fds["seccomp"] = _memfd("seccomp", program)
    status_r, fds["status"] = os.pipe()
    side_r, fds["side"] = os.pipe()
    try:
        command = build_command(config, limits, fds, wrapper)
        return _execute(command, fds, {"status": status_r, "side": side_r}, limits)
    finally:
        for fd in [*fds.values(), status_r, side_r]:
            with contextlib.suppress(OSError):
                os.close(fd)


def _execute(
    command: list[str], fds: dict[str, int], extra: dict[str, int], limits: Limits
) -> Outcome:
    start = time.monotonic()
    try:
        process = subprocess.Popen(
            command,
            env=dict(SANDBOX_ENVIRONMENT),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(fds.values()),
            start_new_session=True,
        )
    except OSError as exc:
        raise SandboxUnavailable(f"cannot start {command[0]}: {exc}") from exc
    for name in ("status", "side"):
        os.close(fds.pop(name))
    assert process.stdout is not None and process.stderr is not None
    pipes = {"stdout": process.stdout.fileno(), "stderr": process.stderr.fileno(), **extra}
    caps = {"stdout": limits.stdout_bytes, "stderr": limits.stderr_bytes, "side": limits.side_bytes}
    reader = _Reader(pipes, caps)
    try:
        timed_out, capped = reader.pump(start + limits.wall_seconds)
    finally:
        reader.close()
    if timed_out or capped:
        _kill(process)
    else:
        try:
            process.wait(timeout=max(0.1, start + limits.wall_seconds - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill(process)
            timed_out = True
    process.stdout.close()
    process.stderr.close()
    started, code = _exit_code(bytes(reader.data["status"]))
    if not started:
        stderr = bytes(reader.data["stderr"]).decode("utf-8", "replace").strip()
        raise SandboxUnavailable(
            f"bubblewrap did not start the sandbox (exit {process.returncode}): {stderr[-400:]}"
        )
    return Outcome(
        exit_code=code,
        stdout=bytes(reader.data["stdout"]),
        stderr=bytes(reader.data["stderr"]),
        side=bytes(reader.data["side"]),
        timed_out=timed_out,
        capped=capped,
        wall_seconds=time.monotonic() - start,
    )
