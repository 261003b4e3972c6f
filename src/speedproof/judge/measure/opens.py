"""How many times each file in a folder was opened while a run ran, from Linux inotify.

Valgrind opens a process's log file each time it starts a program in that process: once when
the process starts (a forked child re-opens it under its own pid), and again after every `exec`
it follows, truncating what the program before wrote. Cachegrind writes a count only when a
process exits, so the instructions of a program that replaced itself by `exec` are never
written, and its log is gone. The opens are what is left: a log opened twice is a process that
ran two programs, one of them uncounted (`speedproof.judge.measure.escapes`).

Opens are watched from outside the sandbox, on the folder's inode. The kernel merges an event
with the one queued just before it when the two are identical, so `IN_MODIFY` is watched too:
Valgrind writes its banner right after each open, which keeps two opens of one log apart. A
queue that overflowed lost events and fails the run's count (`MeasurementError`); the run
itself cannot add to the queue more than a few events a program.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections import Counter
from pathlib import Path
from types import TracebackType

from speedproof.judge.measure.cachegrind import MeasurementError

_IN_MODIFY = 0x00000002
_IN_OPEN = 0x00000020
_IN_Q_OVERFLOW = 0x00004000
_EVENT = struct.Struct("iIII")


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


class FolderOpens:
    """A watch on one folder; `opens()` after the run: file name → times opened."""

    def __init__(self, folder: Path) -> None:
        libc = _libc()
        self._fd: int = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            code = ctypes.get_errno()
            raise MeasurementError(f"cannot watch {folder}: {os.strerror(code)}")
        if libc.inotify_add_watch(self._fd, os.fsencode(folder), _IN_OPEN | _IN_MODIFY) < 0:
            code = ctypes.get_errno()
            os.close(self._fd)
            raise MeasurementError(f"cannot watch {folder}: {os.strerror(code)}")

    def __enter__(self) -> FolderOpens:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        os.close(self._fd)

    def _drain(self) -> bytes:
        data = b""
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return data
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise MeasurementError(f"cannot read the folder's events: {exc}") from exc
            data += chunk

    def opens(self) -> Counter[str]:
        """Every open since the watch began, by file name."""
        data = self._drain()
        found: Counter[str] = Counter()
        offset = 0
        while offset < len(data):
            _, mask, _, length = _EVENT.unpack_from(data, offset)
            start = offset + _EVENT.size
            name = data[start : start + length].rstrip(b"\0").decode(errors="replace")
            offset = start + length
            if mask & _IN_Q_OVERFLOW:
                raise MeasurementError("the count folder's events overflowed; opens were lost")
            if mask & _IN_OPEN:
                found[name] += 1
        return found
