"""The launcher that stays: one per thread, every measured run forked from it, real processes.

No assertion is about how long anything took, only which process ran what, what it could see,
and what is left once a run ends, times out, is interrupted or its launcher dies.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from speedproof.ground.errors import InfrastructureError
from speedproof.ground.launcher import discard, thread_launcher
from speedproof.ground.process import ProcessResult, run_process
from speedproof.ground.sandbox import Sandbox, SandboxSpec, Unsandboxed, make_sandbox

PYTHON = sys.executable


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return make_sandbox()


def _run(
    code: str, where: Path, sandbox: Sandbox | None = None, timeout_s: float = 30
) -> ProcessResult:
    spec = SandboxSpec(readable=(Path(sys.base_prefix), where), writable=(where,))
    return run_process(
        [PYTHON, "-I", "-S", "-c", code],
        cwd=where,
        sandbox=sandbox or Unsandboxed(),
        spec=spec,
        timeout_s=timeout_s,
    )


def _plain(argv: list[str], where: Path, **options: Any) -> ProcessResult:
    """`argv` run unsandboxed through the launcher, with `run_process`'s other `options`."""
    return run_process(
        argv, cwd=where, sandbox=Unsandboxed(), spec=SandboxSpec(), timeout_s=30, **options
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def _gone(pid: int) -> bool:
    """Whether `pid` is gone within 10 s: SIGKILL is sent at once, the exit follows."""
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


PARENT = "import os; print(os.getppid())"


def test_the_runs_of_one_thread_are_forked_by_one_launcher(tmp_path: Path) -> None:
    first = _run(PARENT, tmp_path)
    second = _run(PARENT, tmp_path)
    assert first.exit_code == 0 and first.stdout == second.stdout
    assert int(first.stdout) == thread_launcher()._process.pid != os.getpid()


def test_a_launched_run_holds_no_descriptor_but_its_three_streams(tmp_path: Path) -> None:
    # The launcher's request and answer pipes would let a target ask for runs of its own.
    listed = _run("import os; print(sorted(os.listdir('/proc/self/fd')))", tmp_path)
    # 3 is the listing's own descriptor of /proc/self/fd.
    assert listed.stdout == b"['0', '1', '2', '3']\n"


def test_another_thread_gets_a_launcher_of_its_own_which_stops_with_the_thread(
    tmp_path: Path,
) -> None:
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(int(_run(PARENT, tmp_path).stdout)))
    thread.start()
    thread.join()
    gc.collect()
    assert seen and seen[0] != int(_run(PARENT, tmp_path).stdout)
    assert _gone(seen[0])


def test_a_run_past_its_timeout_is_killed_with_its_group_and_the_launcher_goes_on(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # The run starts a child of its own (in its process group) before sleeping: both must go.
    code = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('pids', 'w').write(f'{os.getpid()} {child.pid}')\n"
        "time.sleep(60)\n"
    )
    late = _run(code, tmp_path, timeout_s=1.0)
    assert late.timed_out and late.exit_code == -signal.SIGKILL
    for pid in map(int, (tmp_path / "pids").read_text().split()):
        assert _gone(pid)
    again = _run("print('still here')", tmp_path, sandbox)
    assert again.stdout == b"still here\n" and not again.timed_out


def test_a_run_interrupted_while_it_waits_leaves_no_process_and_a_fresh_launcher(
    tmp_path: Path,
) -> None:
    before = thread_launcher()._process.pid
    code = "import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    main = threading.get_ident()

    def interrupt() -> None:
        while not (tmp_path / "pid").exists():
            time.sleep(0.02)
        signal.pthread_kill(main, signal.SIGINT)

    # Python's own handler, as the command line has it: a library loaded by an earlier test
    # (Ray) may have put one of its own in place.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _run(code, tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert _gone(int((tmp_path / "pid").read_text()))
    assert _gone(before)
    assert int(_run(PARENT, tmp_path).stdout) != before


def test_a_launcher_that_died_is_an_infrastructure_error_then_replaced(tmp_path: Path) -> None:
    dead = thread_launcher()._process
    dead.kill()
    dead.wait()
    with pytest.raises(InfrastructureError, match="launcher died"):
        _run("print(1)", tmp_path)
    assert _run(PARENT, tmp_path).stdout != str(dead.pid).encode() + b"\n"


def test_a_cpu_set_the_kernel_refuses_names_itself(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match="cannot pin CPUs 4095"):
        _plain([PYTHON, "-c", "print(1)"], tmp_path, cpus=frozenset({4095}))


def test_a_missing_stdin_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(InfrastructureError, match=r"missing\.txt"):
        _plain([PYTHON, "-c", "print(1)"], tmp_path, stdin=tmp_path / "missing.txt")


def test_a_command_that_cannot_start_exits_127_saying_so(tmp_path: Path) -> None:
    script = tmp_path / "not-a-program"
    script.write_text("no interpreter line\n")
    script.chmod(0o755)
    done = _plain([str(script)], tmp_path)
    assert done.exit_code == 127 and b"cannot start" in done.stderr


def test_a_forked_copy_of_the_judge_starts_a_launcher_of_its_own(tmp_path: Path) -> None:
    parents = thread_launcher()._process.pid
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the forked copy: report which launcher ran its run, then leave at once
        try:
            os.write(write, _run(PARENT, tmp_path).stdout)
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 100)
    os.waitpid(pid, 0)
    assert answer.strip() and int(answer) != parents
    assert _run(PARENT, tmp_path).stdout == f"{parents}\n".encode()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a process allowed on two CPUs")
def test_an_unpinned_run_gets_the_cpus_of_the_thread_that_asks_not_those_its_launcher_began_with(
    tmp_path: Path,
) -> None:
    """A launcher started while the judge had left a pinned CPU (pinning.judge_elsewhere) kept
    that narrower mask, and every later unpinned run of the thread ran on one CPU of two."""
    discard()
    every = os.sched_getaffinity(0)
    show = "import os; print(sorted(os.sched_getaffinity(0)))"
    os.sched_setaffinity(0, {min(every)})
    try:
        narrowed = _run(show, tmp_path).stdout.decode().strip()
    finally:
        os.sched_setaffinity(0, every)
    assert narrowed == str([min(every)])
    assert _run(show, tmp_path).stdout.decode().strip() == str(sorted(every))
