"""Which processes a Go test binary started, seen from outside its sandbox (docs/adr/0063).

A Go test binary links the package under test, so candidate code runs in the process that
writes the report. One process can only lie about what it does itself, and the canary
(`go_canary`) catches most such lies; a second process can do more: the binary starts itself
again and relays the child's output with every `--- FAIL` turned into `--- PASS` but the
canary's, and exits with the child's status. So every test binary runs under strace, outside
bubblewrap (`Traced` wraps the sandbox's own command line): the sandbox cannot see strace (its
own PID namespace), cannot write its trace (a folder it is not shown) and cannot stop being
traced (every child is followed from its creation, `-f`). With `-ff` each process and thread gets
its own trace file, and `--seccomp-bpf` stops only the traced calls: process creation and exec.

`read_trace` turns the files into what the binary started: the programs other processes ran (the
binary's own executable named `SELF`), and how many processes were created that ran no program
at all (copies of the binary, forked). The binary's own executable and copies are never allowed;
any other program only where the baseline's run of the same package ran it too (the gate compares
`TestRun.harness`, where each program is one `process` entry).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.process import ProcessResult
from speedproof.ground.sandbox import Sandbox, SandboxSpec
from speedproof.ground.toolchain import Context

STRACE_PACKAGE = "strace"
# Process creation and exec: a thread is a `clone` with CLONE_THREAD, anything else a process.
_TRACED = "trace=execve,execveat,fork,vfork,clone,clone3"
# Paths longer than strace's default 32 characters would be cut short with `...`.
_STRING_LIMIT = "4096"
SELF = "its own binary"
_EXEC = re.compile(r'^(execve|execveat)\((?:[^,"]*, )?"((?:[^"\\]|\\.)*)"')
_CREATE = re.compile(r"^(fork|vfork|clone|clone3)\(")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)")


def find_strace() -> Path:
    found = shutil.which(STRACE_PACKAGE)
    if found is None:
        raise InfrastructureError(
            "strace is not installed, and Go test binaries run only under it (docs/adr/0063): "
            f"install the Debian package {STRACE_PACKAGE} (apt-get install {STRACE_PACKAGE}, "
            "or `make system`)"
        )
    return Path(found)


@dataclass(frozen=True)
class Traced:
    """A sandbox whose command runs under strace, strace itself outside the sandbox."""

    inner: Sandbox
    strace: Path
    # strace's `-o` prefix: it writes PREFIX.PID, one file per process and thread.
    prefix: Path
    # The sandbox's own first program (bubblewrap), once `wrap` has run: its trace is left out.
    outer: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.inner.name} under strace"

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: SandboxSpec) -> list[str]:
        inner = self.inner.wrap(argv, cwd=cwd, spec=spec)
        self.outer[:] = inner[:1]
        traced = [str(self.strace), "-f", "-ff", "-qq", "--seccomp-bpf", "-s", _STRING_LIMIT]
        traced += ["-e", _TRACED, "-e", "signal=none", "-o", str(self.prefix)]
        return [*traced, *inner]


def run_traced(
    context: Context,
    argv: Sequence[str],
    binary: Path,
    *,
    cwd: Path,
    writable: Sequence[Path],
    readable: Sequence[Path],
    env: Mapping[str, str],
    timeout_s: float,
) -> tuple[ProcessResult, Started]:
    """`context.run` of a test binary under strace: its result, and what it started."""
    strace = find_strace()
    # In the judge's own temporary folder: the sandbox has a private /tmp and never sees it.
    with tempfile.TemporaryDirectory(prefix="speedproof-go-trace-") as scratch:
        traced = Traced(context.sandbox, strace, Path(scratch) / "trace")
        ran = replace(context, sandbox=traced).run(
            argv, cwd=cwd, writable=writable, readable=readable, env=env, timeout_s=timeout_s
        )
        outer = traced.outer[0] if traced.outer else ""
        return ran, read_trace(Path(scratch), binary, outer)


class _Job(Protocol):
    @property
    def package(self) -> _Package: ...


class _Package(Protocol):
    @property
    def import_path(self) -> str: ...


def started_in(
    jobs: Sequence[_Job], traced: Sequence[tuple[ProcessResult, Started]], tampered: list[str]
) -> tuple[str, ...]:
    """Each job's `process` entries for `TestRun.harness`; what no run may start is added to
    `tampered`."""
    harness: list[str] = []
    for job, (_, started) in zip(jobs, traced, strict=True):
        tampered += started.problems(job.package.import_path)
        harness += started.entries(job.package.import_path)
    return tuple(sorted(set(harness)))


@dataclass(frozen=True)
class Started:
    """What one test binary started: the programs others ran, and processes that ran none."""

    programs: tuple[str, ...]
    copies: int

    def problems(self, package: str) -> list[str]:
        """What no run may do, the baseline's included: start its own binary, or fork copies."""
        found = []
        if SELF in self.programs:
            found.append(f"{package}: {SELF}")
        if self.copies:
            found.append(f"{package}: {self.copies} forked copies of the test binary")
        return [f"the test binary started a process the baseline's does not: {f}" for f in found]

    def entries(self, package: str) -> list[str]:
        """The programs as `TestRun.harness` entries, compared with the baseline's."""
        return [f"process {package}: {p}" for p in self.programs if p != SELF]


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


@dataclass
class _Process:
    """One trace file: the programs it tried to run (failed tries too), and the processes it
    created, each as (before its first exec, vfork-style)."""

    execs: list[str]
    made: list[tuple[bool, bool]] = field(default_factory=list)

    def count(self, *, after_exec_only: bool) -> tuple[int, int]:
        """(vfork-style, other) creations, leaving out those before the first exec if asked."""
        kept = [vfork for before, vfork in self.made if not (before and after_exec_only)]
        return sum(kept), len(kept) - sum(kept)


def _read_one(path: Path) -> _Process:
    process = _Process([])
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        found = _EXEC.match(line)
        if found:
            process.execs.append(_unescape(found.group(2)))
            continue
        result = _RESULT.search(line)
        # A thread is no process, and a failed creation (`= -1 EAGAIN`) made nothing.
        if not _CREATE.match(line) or "CLONE_THREAD" in line or result is None:
            continue
        if not result.group(1).startswith(("-", "?")):
            vfork = line.startswith("vfork(") or "CLONE_VFORK" in line
            process.made.append((not process.execs, vfork))
    return process


def read_trace(folder: Path, binary: Path, outer: str) -> Started:
    """What the processes traced into `folder` started, besides the outer sandbox (`outer`,
    the first program strace ran) and the test binary (`binary`) itself.

    Forked copies are counted from creations: those not vfork-style, less the processes that
    ran a program. A vfork-style child shares its parent's memory and holds the parent stopped
    until it execs or exits, so one that exits without running a program (Go's own probe for
    pidfd support, `clone(CLONE_VM|CLONE_PIDFD|CLONE_VFORK)`, does exactly that whenever a
    binary uses os/exec) never runs beside its parent as a second copy could.
    """
    seen_outer = seen_binary = False
    programs: list[str] = []
    vforks = others = accounted = 0
    for path in sorted(folder.iterdir()):
        process = _read_one(path)
        first = process.execs[0] if process.execs else None
        if first == outer and not seen_outer:
            seen_outer = True  # bubblewrap itself, starting the sandbox
            continue
        own = first == str(binary) and not seen_binary
        # Before its exec, the binary's process is bubblewrap's child setting the sandbox up.
        v, o = process.count(after_exec_only=own)
        vforks, others = vforks + v, others + o
        seen_binary = seen_binary or own
        # The binary replaced by another program, or another process (a thread runs none).
        later = process.execs[1:] if own else process.execs
        accounted += bool(later) and not own
        programs += [SELF if p in (str(binary), "/proc/self/exe") else p for p in later]
    if not seen_binary:
        raise InfrastructureError(f"strace's trace of {binary} does not show it starting")
    copies = min(others, max(0, vforks + others - accounted))
    return Started(tuple(sorted(set(programs))), copies)
