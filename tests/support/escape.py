"""Candidates that hide work from the instruction lane, as patches against textstat.

Each replaces `textstat/__main__.py`. Run natively, every one prints the baseline's report
byte for byte; under Cachegrind each tries to make the counted instructions fewer than the
work it did:

- `killed_child_patch`: a forked child computes the report, hands it over through a pipe and
  is killed with SIGKILL by the parent. Valgrind writes a process's count when it exits, so the
  child's instructions, nearly all of the run's, are never written.
- `daemon_patch`: a child starts its own session, forks again and exits; the grandchild computes
  the report, hands it over and sleeps 20 s. It outlives the parent and dies with the sandbox's
  PID namespace, killed before it could write its count.
- `under_valgrind_patch`: the program looks for Valgrind's preload library in its own memory
  map; when it finds it, it prints the first line of the report and stops.
"""

from __future__ import annotations

from pathlib import Path

from support.git import git_run

_HEADER = '''"""Entry point for `python -m textstat`."""

import os
import signal
import sys
import time

from textstat.cli import main


def _report_through_pipe(writer: int) -> None:
    """Run `main` with stdout on `writer`, then a NUL and the exit code."""
    sys.stdout = open(writer, "w", encoding="utf-8", closefd=False)
    try:
        code = main()
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code if isinstance(exc.code, int) else 1
    sys.stdout.flush()
    os.write(writer, b"\\0" + bytes([code]))


def _read_report(reader: int) -> tuple[bytes, int]:
    data = b""
    while not (len(data) >= 2 and data[-2:-1] == b"\\0"):
        chunk = os.read(reader, 1 << 16)
        if not chunk:
            raise SystemExit("the worker ended without a report")
        data += chunk
    return data[:-2], data[-1]
'''

_KILLED_CHILD = """

reader, writer = os.pipe()
child = os.fork()
if child == 0:
    os.close(reader)
    _report_through_pipe(writer)
    signal.pause()
os.close(writer)
report, code = _read_report(reader)
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
sys.stdout.buffer.write(report)
sys.stdout.flush()
sys.exit(code)
"""

_DAEMON = """

reader, writer = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    os.close(reader)
    _report_through_pipe(writer)
    # Let go of the caller's pipes, so nothing waits for this process, and outlive the parent.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(20)
    os._exit(0)
os.close(writer)
report, code = _read_report(reader)
sys.stdout.buffer.write(report)
sys.stdout.flush()
sys.exit(code)
"""

_UNDER_VALGRIND = """


def _under_valgrind() -> bool:
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        return "vgpreload" in maps.read()


if _under_valgrind():
    print("textstat report")
    sys.exit(0)
sys.exit(main())
"""


def _main_patch(repo: Path, source: str) -> str:
    """A diff against `repo` (a textstat checkout) that makes `source` the entry point; the
    checkout is left as it was."""
    entry = repo / "textstat" / "__main__.py"
    original = entry.read_text(encoding="utf-8")
    entry.write_text(source, encoding="utf-8")
    try:
        return git_run(repo, "diff").stdout
    finally:
        entry.write_text(original, encoding="utf-8")


def killed_child_patch(repo: Path) -> str:
    return _main_patch(repo, _HEADER + _KILLED_CHILD)


def daemon_patch(repo: Path) -> str:
    return _main_patch(repo, _HEADER + _DAEMON)


def under_valgrind_patch(repo: Path) -> str:
    return _main_patch(repo, _HEADER + _UNDER_VALGRIND)
