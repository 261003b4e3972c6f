"""The launcher that stays: one small process a thread forks every measured run.

Why a launcher at all is ADR 0003: `ru_maxrss` survives `exec`, so a command exec'd straight
from the judge reports the judge's peak memory; forked from a bare `python -I -S` it reports
the target's, over a floor of about 6 MiB. That launcher was started afresh for every run, and
its start-up (a Python interpreter, 12-20 ms a run here) lay outside the clock but inside every
judgement: about 150 measured runs in one of logstat's, 2-3 s. This one is started once per
thread and forks each run on request (docs/adr/0084): the command is forked from the same kind
of bare interpreter, so the floor and what the clock covers (fork → `wait4`) are unchanged.

The protocol, over two pipes: the judge writes a request (a length line, then NUL-separated
fields: executable, cwd, CPUs or "-" for the launcher's own, stdin, stdout and stderr paths,
argv count, argv, then the environment as NAME=value); the launcher forks, and answers a line
with the child's pid once the child has exec'd (or failed to prepare), then a line with exit
code, wall, CPU and peak RSS once `wait4` returns. A child that cannot be prepared (pin its
CPUs, open its files, enter its folder) exits 127 at once and the answer names what failed; a
command that cannot be exec'd writes "cannot start" to its own stderr and exits 127, as under
Popen.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from speedproof.ground.errors import InfrastructureError

# Runs in `python -I -S`: only os, signal, sys and time are imported, so the process the runs
# are forked from stays as small as the launcher of ADR 0003 (the floor every peak RSS reads).
_SERVER = r"""
import os, signal, sys, time
requests, answers = int(sys.argv[1]), int(sys.argv[2])
os.set_inheritable(requests, False)
os.set_inheritable(answers, False)

def read(count):
    data = b""
    while len(data) < count:
        chunk = os.read(requests, count - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data

def request():
    head = b""
    while not head.endswith(b"\n"):
        head += read(1)
    return read(int(head)).split(b"\0")

def prepare(cwd, pin, stdin, stdout, stderr):
    step = "start a session"
    try:
        os.setsid()
        if pin != b"-":
            step = "pin CPUs " + pin.decode()
            os.sched_setaffinity(0, {int(cpu) for cpu in pin.split(b",")})
        for target, path, flags in ((0, stdin, os.O_RDONLY), (1, stdout, os.O_WRONLY),
                                    (2, stderr, os.O_WRONLY)):
            step = "open " + path.decode(errors="replace")
            opened = os.open(path, flags)
            os.dup2(opened, target)
            os.close(opened)
        step = "enter " + cwd.decode(errors="replace")
        os.chdir(cwd)
    except OSError as exc:
        return (step + ": " + (exc.strerror or str(exc))).encode()
    return b""

while True:
    fields = request()
    executable, cwd, pin, stdin, stdout, stderr, count = fields[:7]
    argv = fields[7:7 + int(count)]
    env = dict(item.split(b"=", 1) for item in fields[7 + int(count):])
    failed, told = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(failed)
        problem = prepare(cwd, pin, stdin, stdout, stderr)
        if problem:
            os.write(told, problem)
            os._exit(127)
        # Python ignores SIGPIPE and SIGXFSZ; the command gets the defaults, as Popen gives them.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        try:
            os.execve(executable, argv, env)
        except OSError as exc:
            os.write(2, b"cannot start %r: %s\n" % (argv[0], (exc.strerror or "").encode()))
        os._exit(127)
    os.close(told)
    problem = os.read(failed, 4096)
    os.close(failed)
    os.write(answers, b"%d\n" % pid)
    _, status, usage = os.wait4(pid, 0)
    end = time.perf_counter()
    code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    line = "%d %r %r %d " % (code, end - start, cpu, usage.ru_maxrss)
    os.write(answers, line.encode() + problem.replace(b"\n", b" ") + b"\n")
"""


@dataclass(frozen=True)
class Launched:
    """What the launcher measured of one run."""

    exit_code: int
    wall_s: float
    cpu_s: float
    max_rss_kib: int
    timed_out: bool


@dataclass(frozen=True)
class Command:
    """One run as the launcher is asked for it."""

    executable: str
    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    cpus: frozenset[int] | None
    stdin: Path | None


class Launcher:
    """A launcher process and the judge's ends of its pipes; one thread's, one run at a time."""

    def __init__(self) -> None:
        requests_read, self._requests = os.pipe()
        self._answers, answers_write = os.pipe()
        # The launcher keeps the CPU mask of the thread that starts it (`_request`).
        self.cpus = frozenset(os.sched_getaffinity(0))
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _SERVER, str(requests_read), str(answers_write)],
                pass_fds=(requests_read, answers_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                # A launcher whose judge stopped reading dies of a broken pipe, silently.
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={"PATH": os.defpath},
            )
        except OSError as exc:
            for fd in (self._requests, self._answers):
                os.close(fd)
            raise InfrastructureError(f"cannot start the process launcher: {exc}") from exc
        finally:
            os.close(requests_read)
            os.close(answers_write)
        self._pending = b""
        # The process this launcher serves: a forked copy of it must not share the pipes.
        self.owner = os.getpid()
        # A thread's launcher goes with the thread (its `threading.local` is dropped) or at exit.
        self._finalizer = weakref.finalize(
            self, _stop, self._requests, self._answers, self._process, self.owner
        )

    def run(self, command: Command, out: Path, err: Path, timeout_s: float) -> Launched:
        """Run `command` with stdout and stderr into the files `out` and `err` (unlinked once
        the child has them open: the caller reads them through handles of its own); kill its
        process group when `timeout_s` passes."""
        try:
            self._send(_request(command, out, err, self.cpus))
            pid = int(self._line())
        finally:
            for path in (out, err):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        with watched(pid, timeout_s) as fired:
            answer = self._line()
        return _launched(answer, fired.is_set())

    def close(self) -> None:
        self._finalizer()

    def _send(self, data: bytes) -> None:
        view = memoryview(b"%d\n" % len(data) + data)
        try:
            while view:
                view = view[os.write(self._requests, view) :]
        except BrokenPipeError as exc:
            raise InfrastructureError("the process launcher died; no run was started") from exc

    def _line(self) -> bytes:
        while b"\n" not in self._pending:
            chunk = os.read(self._answers, 4096)
            if not chunk:
                code = self._process.poll()
                raise InfrastructureError(f"the process launcher died (status {code})")
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line


def _stop(requests: int, answers: int, process: subprocess.Popen[bytes], owner: int) -> None:
    for fd in (requests, answers):
        with contextlib.suppress(OSError):
            os.close(fd)
    if os.getpid() != owner:
        return  # a forked copy of the judge: the launcher is its parent's to stop
    # Its requests pipe closed, the launcher reads end of file and exits.
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextlib.contextmanager
def watched(pid: int, timeout_s: float) -> Iterator[threading.Event]:
    """A watchdog over the process group of run `pid` while the body waits for it: killed when
    `timeout_s` passes (the event is then set) or when the wait is interrupted, and once more
    after it, because the group may outlive its leader (a daemonised grandchild)."""
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        kill_group(pid)

    timer = threading.Timer(timeout_s, expire)
    timer.start()
    try:
        yield fired
    except BaseException:
        kill_group(pid)
        raise
    finally:
        timer.cancel()
    kill_group(pid)


def _request(command: Command, out: Path, err: Path, inherited: frozenset[int]) -> bytes:
    # An unpinned run gets the CPUs of the thread asking, as a run Popen starts from it would; the
    # launcher keeps the mask it began with, narrower if that was inside pinning.judge_elsewhere.
    # A child that inherits the mask it needs already is not pinned again.
    wanted = frozenset(os.sched_getaffinity(0)) if command.cpus is None else command.cpus
    pin = "-" if wanted == inherited else ",".join(str(c) for c in sorted(wanted))
    fields = [
        command.executable,
        str(command.cwd),
        pin,
        str(command.stdin or os.devnull),
        str(out),
        str(err),
        str(len(command.argv)),
        *command.argv,
        *(f"{name}={value}" for name, value in command.env.items()),
    ]
    if any("\0" in field for field in fields):
        raise InfrastructureError("an argument or variable of the command holds a NUL byte")
    return b"\0".join(os.fsencode(field) for field in fields)


def _launched(answer: bytes, timed_out: bool) -> Launched:
    code, wall, cpu, rss, *problem = answer.split(b" ", 4)
    text = b"".join(problem).strip().decode(errors="replace")
    if text:
        raise InfrastructureError(f"cannot {text}")
    return Launched(int(code), float(wall), float(cpu), int(rss), timed_out)


@contextlib.contextmanager
def output_file() -> Iterator[tuple[IO[bytes], Path]]:
    """A temporary file the judge reads and a launched child writes by name (mode 0600)."""
    fd, name = tempfile.mkstemp(prefix="speedproof-run-")
    path = Path(name)
    try:
        with os.fdopen(fd, "w+b") as handle:
            yield handle, path
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


_LOCAL = threading.local()


def thread_launcher() -> Launcher:
    """This thread's launcher, started on first use (and again in a forked process)."""
    found: Launcher | None = getattr(_LOCAL, "launcher", None)
    if found is None or found.owner != os.getpid():
        found = Launcher()
        _LOCAL.launcher = found
    return found


def discard() -> None:
    """Stop this thread's launcher: a run interrupted mid-answer leaves its pipes out of step."""
    found: Launcher | None = getattr(_LOCAL, "launcher", None)
    _LOCAL.launcher = None
    if found is not None and found.owner == os.getpid():
        found.close()
