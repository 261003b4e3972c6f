"""Run one command and account for it: wall time, CPU (user + sys), peak RSS, outputs, exit.

CPU and peak memory come from `wait4`, i.e. the kernel's accounting of the finished child and
every descendant it waited for, not from polling. The `wait4` that counts is a small launcher's,
not the judge's: see `_LAUNCHER`. Output goes to unlinked temporary files rather
than pipes, so a chatty program never blocks on a full pipe and the parent does no reading work
while the clock runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.sandbox import Sandbox, SandboxSpec

# Beyond this many bytes an output is kept only as its digest and length: 64 MiB is far more
# than any workload report a person reads, and keeps memory bounded across 50 runs.
_KEEP_LIMIT = 64 * 1024 * 1024
_CHUNK = 1024 * 1024

# The command is started by a fresh `python -I -S` that forks it, times it and reports the rusage
# of that child, because ru_maxrss survives exec: a process reports the peak RSS of the address
# space it was exec'd from, and a child exec'd straight from the judge reports max(the judge's
# peak, the target's). Measured here: `true` read 18 MiB from a bare interpreter, 95 MiB once
# scipy was imported and 395 MiB after the judge had once held 300 MiB, so a 20 MiB target was
# invisible behind the judge and the floor only rose. Forked from this launcher, `true` reads
# 6 MiB whatever the judge holds. The launcher starts before the clock does: wall time runs from
# its fork to its wait4 (docs/adr/0003-timed-lane.md has the costs).
_LAUNCHER = """
import os, signal, sys, time
report = int(sys.argv[1])
os.set_inheritable(report, False)
if sys.argv[2] != "-":
    try:
        os.sched_setaffinity(0, {int(cpu) for cpu in sys.argv[2].split(",")})
    except OSError as exc:
        os.write(report, f"pin CPUs {sys.argv[2]}: {exc.strerror}".encode())
        sys.exit(1)
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    # Python ignores SIGPIPE and SIGXFSZ; the command gets the defaults, as Popen gives them.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execv(sys.argv[3], sys.argv[4:])
    except OSError as exc:
        os.write(2, f"cannot start {sys.argv[4]!r}: {exc.strerror}\\n".encode())
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
end = time.perf_counter()
cpu = usage.ru_utime + usage.ru_stime
code = os.waitstatus_to_exitcode(status)
os.write(report, f"{code} {end - start!r} {cpu!r} {usage.ru_maxrss}".encode())
"""


@dataclass(frozen=True)
class ProcessResult:
    argv: tuple[str, ...]
    exit_code: int
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    stdout: bytes
    stderr: bytes
    stdout_sha256: str
    stderr_sha256: str
    timed_out: bool

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def tail(self, limit: int = 2000) -> str:
        """The end of stderr then stdout, for error messages a person reads."""
        text = (self.stderr or self.stdout).decode(errors="replace")
        return text[-limit:]


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _read_back(handle: IO[bytes]) -> tuple[bytes, str]:
    handle.seek(0)
    digest = hashlib.sha256()
    kept = bytearray()
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
        if len(kept) < _KEEP_LIMIT:
            kept.extend(chunk[: _KEEP_LIMIT - len(kept)])
    return bytes(kept), digest.hexdigest()


@contextlib.contextmanager
def _stdin(path: Path | None) -> Iterator[int | IO[bytes]]:
    if path is None:
        yield subprocess.DEVNULL
        return
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InfrastructureError(f"cannot open stdin file {path}: {exc.strerror}") from exc
    with handle:
        yield handle


def _wait(
    proc: subprocess.Popen[bytes], timeout_s: float
) -> tuple[int, resource.struct_rusage, float, bool]:
    """Wait for the child with a watchdog that kills its whole process group on timeout."""
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout_s, expire)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.perf_counter()
    except BaseException:
        # Ctrl-C or SIGTERM while waiting: the run dies with us, and is reaped, not orphaned.
        _kill_group(proc.pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(proc.pid, 0)
        raise
    finally:
        timer.cancel()
    # The group may outlive its leader (a daemonised grandchild); nothing of a run survives it.
    _kill_group(proc.pid)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage, end, fired.is_set()


def _resolve(name: str, cwd: Path, env: Mapping[str, str]) -> str:
    """The executable `name` names, found the way Popen would: on PATH, or relative to cwd."""
    if "/" in name:
        found: str | None = str(cwd / name)
        if not os.access(str(found), os.X_OK):
            found = None
    else:
        found = shutil.which(name, path=env.get("PATH", os.defpath))
    if found is None:
        raise InfrastructureError(f"cannot start {name!r}: No such file or directory")
    return found


def _launched(
    report: IO[bytes], fallback: tuple[int, float, float, int], timed_out: bool
) -> tuple[int, float, float, int]:
    """(exit code, wall, cpu, peak RSS KiB) as the launcher measured its child.

    A run killed by the timeout takes its launcher with it, so there is no report; the judge's
    own figures stand in, and the result says timed_out.
    """
    report.seek(0)
    text = report.read()
    if text.startswith(b"pin "):
        raise InfrastructureError(f"cannot {text.decode(errors='replace')}")
    fields = text.split()
    if len(fields) == 4:
        return int(fields[0]), float(fields[1]), float(fields[2]), int(fields[3])
    if timed_out:
        return fallback
    raise InfrastructureError(f"the process launcher died (status {fallback[0]}) without a report")


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    sandbox: Sandbox,
    spec: SandboxSpec,
    timeout_s: float,
    stdin: Path | None = None,
    env: Mapping[str, str] | None = None,
    cpus: frozenset[int] | None = None,
    launcher: bool = True,
) -> ProcessResult:
    """Run `argv` inside `sandbox` and return what the kernel accounted for it.

    With `cpus`, the run and everything it starts may use only those CPUs (see
    `speedproof.judge.measure.pinning`); a set the kernel refuses is an `InfrastructureError`.
    `launcher=False` (a run nothing reads the figures of: the variants gate's) starts the
    command straight from the judge, which saves the launcher's start, 10 ms of CPU a run, and
    leaves its peak RSS unreliable.
    """
    wrapped = sandbox.wrap(argv, cwd=cwd, spec=spec)
    environment = dict(spec.env if env is None else env)
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as report,
        _stdin(stdin) as source,
    ):
        executable = _resolve(wrapped[0], cwd, environment)
        pin = "-" if cpus is None else ",".join(str(cpu) for cpu in sorted(cpus))
        measured = launcher or cpus is not None
        head = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report.fileno()), pin]
        # Unmeasured, the command is the sandbox's own argv, its first word found as Popen would.
        command = [*head, executable, *wrapped] if measured else list(wrapped)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                command,
                executable=None if measured else executable,
                cwd=cwd,
                env=environment,
                stdin=source,
                stdout=out,
                stderr=err,
                start_new_session=True,
                pass_fds=(report.fileno(),),
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start {argv[0]!r}: {exc.strerror}") from exc
        code, usage, end, timed_out = _wait(proc, timeout_s)
        own = (code, end - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
        if measured:
            code, wall_s, cpu_s, max_rss_kib = _launched(report, own, timed_out)
        else:
            code, wall_s, cpu_s, max_rss_kib = own
        stdout, stdout_sha = _read_back(out)
        stderr, stderr_sha = _read_back(err)
    return ProcessResult(
        argv=tuple(argv),
        exit_code=code,
        wall_s=wall_s,
        cpu_s=cpu_s,
        max_rss_kib=max_rss_kib,
        stdout=stdout,
        stderr=stderr,
        stdout_sha256=stdout_sha,
        stderr_sha256=stderr_sha,
        timed_out=timed_out,
    )
