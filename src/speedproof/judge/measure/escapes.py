"""Every process a counted run started must leave its count: which ones did not.

Valgrind writes a process's Cachegrind count when the process exits. A process killed by
SIGKILL (by its parent, or by the kernel when the sandbox's PID namespace dies under a process
that outlived its parent) never exits through Valgrind, so its instructions are never written:
summing the count files there are would read such a run as doing almost nothing. A candidate can
do its work in such a process and hand the answer over through a pipe; on textstat this read
-94 %, exact, and was accepted with `primary_metric = "instructions"` (docs/adr/0064).

Valgrind opens a log file for each process as it starts (`--log-file=…valgrind.%p.log`,
re-opened in a forked child under its own pid), and without `-q` it writes the process's command
line at the top and the `I refs` summary at the bottom when the process ends. A log with no
summary, or without the count file of its pid, is a process that escaped counting. The count
file must also agree with the summary in the log, so a count file edited after the fact is seen.

A program that replaced itself by `exec` left no count either, and the program after it truncated
its log: only the opens of the log say it ran (`speedproof.judge.measure.opens`). Every
fork-and-exec makes one (the child runs a few thousand instructions of the parent's program before
its `exec`), so these are not refused on their own: the candidate's must be no more than the
baseline's on the same workload, program for program (`discarded_beyond`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from speedproof.judge.measure.cachegrind import MeasurementError, parse_total_ir

_LOG = re.compile(r"valgrind\.(\d+)\.log")
_OUT = re.compile(r"cachegrind\.(\d+)\.out")
_COMMAND = re.compile(r"^==\d+== Command: (.*)$", re.MULTILINE)
_SUMMARY = re.compile(r"^==\d+== I\s+refs:\s+([\d,]+)\s*$", re.MULTILINE)
# A command line is quoted in a reason: enough to recognise it, never a page of arguments.
_ARGV_LIMIT = 120


@dataclass(frozen=True)
class ProcessCount:
    """One process of a counted run: its command line, and its count when it wrote one."""

    pid: int
    argv: str
    ir: int | None
    problem: str | None = None
    # Programs the process ran: one, plus one for every `exec` Valgrind followed.
    programs: int = 1

    def describe(self) -> str:
        """Why this process has no count, as a reason names it."""
        argv = self.argv if len(self.argv) <= _ARGV_LIMIT else self.argv[:_ARGV_LIMIT] + " …"
        why = self.problem or "ended without its instruction count (killed by a signal?)"
        return f"a process escaped counting: pid {self.pid} ({argv or 'argv unknown'}) {why}"


def _by_pid(folder: Path, pattern: re.Pattern[str]) -> dict[int, Path]:
    found: dict[int, Path] = {}
    for path in folder.iterdir():
        matched = pattern.fullmatch(path.name)
        if matched is not None:
            found[int(matched.group(1))] = path
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MeasurementError(f"cannot read {path.name}: {exc.strerror}") from exc


def _process(pid: int, log: Path, out: Path | None, programs: int) -> ProcessCount:
    text = _read(log)
    command = _COMMAND.search(text)
    argv = command.group(1).strip() if command else ""
    summary = _SUMMARY.findall(text)
    if out is None or not summary:
        return ProcessCount(pid, argv, None, programs=programs)
    ir = parse_total_ir(_read(out))
    logged = int(summary[-1].replace(",", ""))
    if logged != ir:
        problem = f"left a count file of {ir:,} Ir where its log says {logged:,}"
        return ProcessCount(pid, argv, None, problem, programs)
    return ProcessCount(pid, argv, ir, programs=programs)


def process_counts(folder: Path, opens: Mapping[str, int]) -> tuple[ProcessCount, ...]:
    """Every process the run started, by pid, from the logs and count files in `folder` and
    the times each log was opened (`opens`, from `FolderOpens`).

    A count file whose pid has no log was not written by a process Valgrind started there:
    MeasurementError, as for a count that cannot be read.
    """
    logs, outs = _by_pid(folder, _LOG), _by_pid(folder, _OUT)
    strays = sorted(set(outs) - set(logs))
    if strays:
        raise MeasurementError(f"count files without a Valgrind log: pids {strays}")
    return tuple(
        _process(pid, logs[pid], outs.get(pid), max(1, opens.get(logs[pid].name, 1)))
        for pid in sorted(logs)
    )


def escaped(counts: tuple[ProcessCount, ...]) -> tuple[str, ...]:
    """One reason for every process that started and wrote no count."""
    return tuple(count.describe() for count in counts if count.ir is None)


def discarded(counts: tuple[ProcessCount, ...], root: Path) -> tuple[str, ...]:
    """For every program whose count `exec` discarded, the command line that replaced it (the
    program's own folder written `.`, so both sides' runs compare), sorted."""
    found: list[str] = []
    for count in counts:
        argv = count.argv.replace(str(root), ".")
        found += [argv] * (count.programs - 1)
    return tuple(sorted(found))


def discarded_beyond(baseline: tuple[str, ...], candidate: tuple[str, ...]) -> tuple[str, ...]:
    """One reason for every program of the candidate's run whose count `exec` discarded, beyond
    those of the baseline's run (matched by the command line that replaced it)."""
    extra = Counter(candidate) - Counter(baseline)
    return tuple(
        f"a process escaped counting: a program replaced itself by exec ({argv[:_ARGV_LIMIT]}) "
        f"before its count was written, {times} time(s) more than in the baseline's run"
        for argv, times in sorted(extra.items())
    )
