"""Run one command and account for it: wall time, CPU (user + sys), peak RSS, outputs, exit.

CPU and peak memory come from `wait4`, i.e. the kernel's accounting of the finished child and
every descendant it waited for, not from polling. The `wait4` that counts is a small launcher's,
not the judge's: see `speedproof.ground.launcher`. Output goes to temporary files rather than
pipes, so a chatty program never blocks on a full pipe and the parent does no reading work while
the clock runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.launcher import (
    Command,
    Launched,
    discard,
    kill_group,
    output_file,
    thread_launcher,
    watched,
)
from speedproof.ground.sandbox import Sandbox, SandboxSpec

# Beyond this many bytes an output is kept only as its digest and length: 64 MiB is far more
# than any workload report a person reads, and keeps memory bounded across 50 runs.
_KEEP_LIMIT = 64 * 1024 * 1024
_CHUNK = 1024 * 1024


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
    with watched(proc.pid, timeout_s) as fired:
        try:
            _, status, usage = os.wait4(proc.pid, 0)
            end = time.perf_counter()
        except BaseException:
            # Ctrl-C or SIGTERM while waiting: the run dies with us, and is reaped, not orphaned.
            kill_group(proc.pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(proc.pid, 0)
            raise
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
    executable = _resolve(wrapped[0], cwd, environment)
    command = Command(executable, wrapped, cwd, environment, cpus, stdin)
    with output_file() as (out, out_path), output_file() as (err, err_path):
        if launcher or cpus is not None:
            figures = _through_launcher(command, out_path, err_path, timeout_s)
        else:
            figures = _straight(command, out, err, timeout_s)
        stdout, stdout_sha = _read_back(out)
        stderr, stderr_sha = _read_back(err)
    return ProcessResult(
        argv=tuple(argv),
        exit_code=figures.exit_code,
        wall_s=figures.wall_s,
        cpu_s=figures.cpu_s,
        max_rss_kib=figures.max_rss_kib,
        stdout=stdout,
        stderr=stderr,
        stdout_sha256=stdout_sha,
        stderr_sha256=stderr_sha,
        timed_out=figures.timed_out,
    )


def _through_launcher(command: Command, out: Path, err: Path, timeout_s: float) -> Launched:
    """The run forked by this thread's launcher, which measures it (see `ground.launcher`)."""
    try:
        return thread_launcher().run(command, out, err, timeout_s)
    except BaseException:
        # Interrupted between a request and its answer, the pipes are out of step: the next
        # run starts a new launcher.
        discard()
        raise


def _straight(command: Command, out: IO[bytes], err: IO[bytes], timeout_s: float) -> Launched:
    """The run started straight from the judge: its peak RSS is not the target's."""
    with _stdin(command.stdin) as source:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                list(command.argv),
                executable=command.executable,
                cwd=command.cwd,
                env=dict(command.env),
                stdin=source,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start {command.argv[0]!r}: {exc.strerror}") from exc
        code, usage, end, timed_out = _wait(proc, timeout_s)
    cpu = usage.ru_utime + usage.ru_stime
    return Launched(code, end - start, cpu, usage.ru_maxrss, timed_out)
