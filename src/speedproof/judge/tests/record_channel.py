"""The pipe a test process writes speedproof's record into, read by the judge as it is written.

The record of a test run (docs/adr/0033) was a file in the build folder, which the test process
may write: code under test could rewrite it at exit, consistently with a forged exit status, and
the rewrite was the record. Here it is a named pipe (FIFO) the judge creates in a folder of its
own, outside every folder the run may write (bound read-only: the pipe cannot be removed, replaced
or have its mode changed), and opens for reading before the run starts. A thread drains it while
the run goes on, so what the runner wrote has left the test process's reach the moment it was
read: a later writer can only add lines, never take one back. speedproof's runners open the path
write-only, before any code under test is imported, with `O_APPEND` like a file.

The pipe's mode is write-only (0o200) once the judge holds it open: a process of the same user
without CAP_DAC_OVERRIDE cannot open it to read, and so cannot consume lines before the judge
does. A sandbox entered as root keeps that capability in its namespace; there only the thread's
promptness stands between a reader and the lines.
"""

from __future__ import annotations

import os
import select
import shutil
import tempfile
import threading
from pathlib import Path
from types import TracebackType

# A record larger than this is not speedproof's: 64 MiB holds 16 000 failing tests with their
# 4 000-character messages, and bounds the judge's memory against a test process that floods
# the pipe.
RECORD_LIMIT = 64 * 1024 * 1024
# How long the reader waits for data before looking at whether the run has ended.
_POLL_S = 0.05
_CHUNK = 64 * 1024


class RecordChannel:
    """A FIFO at `path`, in `folder` (show it read-only to the run), drained from `__enter__`
    until `text()`. Use as a context manager: the folder is removed on exit."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="speedproof-record-"))
        self.path = self.folder / "record"
        self._fd = -1
        self._kept = bytearray()
        self._overflow = 0
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._drain, name="speedproof-record", daemon=True)

    def __enter__(self) -> RecordChannel:
        os.mkfifo(self.path, 0o600)
        # Read-write: the pipe always has a writer (this descriptor), so reads never see an
        # end of file before the runner has even opened it, and opening it never blocks.
        self._fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self.path.chmod(0o200)
        self._reader.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._finish()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _read_ready(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, _CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                return
            room = RECORD_LIMIT - len(self._kept)
            self._kept += chunk[:room]
            self._overflow += max(0, len(chunk) - room)

    def _drain(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._fd], [], [], _POLL_S)
            if ready:
                self._read_ready()

    def _finish(self) -> None:
        if self._fd < 0:
            return
        self._stop.set()
        self._reader.join()
        # The run has ended and every process of it is gone: what is left is all there is.
        self._read_ready()
        os.close(self._fd)
        self._fd = -1

    def text(self) -> str:
        """Everything written, once the run has ended; ValueError if it is not a record's size
        or not text."""
        self._finish()
        if self._overflow:
            raise ValueError(
                f"the record grew past {RECORD_LIMIT} bytes ({self._overflow} more were written)"
            )
        return self._kept.decode("utf-8")
