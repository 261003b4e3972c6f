"""The sandbox itself, probed with raw scripts that skip the subset check and the harness.

Each escape is tried directly (os.fork, sockets, file writes, new namespaces), so what contains
it is bubblewrap, seccomp and the rlimits, not the subset check in front of them.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from speedproof.functions.instruction_cost import cachegrind_wrapper, parse_total_ir
from speedproof.functions.jobs import job_document, run_harness
from speedproof.functions.sandbox import Limits, SandboxConfig, run_script
from speedproof.ground.errors import SandboxUnavailable


def run(script: str, limits: Limits | None = None) -> tuple[str, str]:
    outcome = run_script(script, b"{}", limits=limits)
    return outcome.stdout.decode(), outcome.stderr.decode()


def test_fork_is_refused_inside_the_sandbox_even_for_a_root_caller() -> None:
    out, _ = run(
        "import os, subprocess\n"
        "try:\n    os.fork()\n    print('forked')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
        "try:\n    subprocess.run(['/bin/true'])\n    print('spawned')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
    )
    assert out.split("\n")[:2] == ["refused 1", "refused 1"]


def test_the_network_is_unreachable_and_sockets_are_refused() -> None:
    out, _ = run(
        "import socket\n"
        "try:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    print('socket')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
        "try:\n    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n    print('socket')\n"
        "except OSError as e:\n    print('refused', e.errno)\n"
    )
    assert out.split("\n")[:2] == ["refused 1", "refused 1"]


def test_nothing_outside_tmp_is_writable_and_tmp_files_are_capped_at_one_mebibyte() -> None:
    out, _ = run(
        "import sys\n"
        f"for path in ['/x', '/usr/x', '{sys_prefix()}/x', '/sp/main.py', '/proc/x', '/dev/x']:\n"
        "    try:\n        open(path, 'w').write('x')\n        print('wrote', path)\n"
        "    except OSError:\n        print('refused')\n"
        "try:\n    open('/tmp/big', 'wb').write(b'x' * (2 << 20))\n    print('wrote big')\n"
        "except OSError as e:\n    print('capped', e.errno)\n"
    )
    lines = out.split("\n")
    assert lines[:6] == ["refused"] * 6
    assert lines[6] == "capped 27"  # EFBIG: RLIMIT_FSIZE, 1 MiB


def sys_prefix() -> str:
    import sys

    return sys.base_prefix


def test_host_files_are_not_visible() -> None:
    out, _ = run(
        "import os\n"
        "print(os.path.exists('/etc/passwd'), os.path.exists('/work'), os.path.exists('/home'))\n"
        "print(sorted(os.listdir('/')))\n"
    )
    first, second = out.split("\n")[:2]
    assert first == "False False False"
    assert "etc" not in second and "work" not in second


def test_the_script_runs_as_nobody_with_a_cleared_environment() -> None:
    out, _ = run(
        "import os, json\nprint(os.getuid(), os.getgid())\nprint(json.dumps(dict(os.environ)))\n"
    )
    ids, env = out.split("\n")[:2]
    assert ids == "65534 65534"
    assert json.loads(env) == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PWD": "/",  # set by bwrap --chdir
    }


# Every /proc/*/environ the script can read, and its own, as JSON: pid 1 inside the sandbox is
# bubblewrap's init, whose environment is whatever bubblewrap itself was started with.
ENVIRON_DUMP = (
    "import json, os\n"
    "found = {}\n"
    "for entry in ['self', *sorted(p for p in os.listdir('/proc') if p.isdigit())]:\n"
    "    try:\n"
    "        raw = open(f'/proc/{entry}/environ', 'rb').read()\n"
    "    except OSError as error:\n"
    "        found[entry] = f'unreadable: {error.errno}'\n"
    "        continue\n"
    "    found[entry] = [item.decode() for item in raw.split(b'\\0') if item]\n"
    "print(json.dumps(found))\n"
)


def test_the_callers_environment_is_not_readable_from_any_process_in_the_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-speedproof-test-0123456789abcdef"
    monkeypatch.setenv("SPEEDPROOF_TEST_SECRET_TOKEN", secret)
    out, _ = run(ENVIRON_DUMP)
    found = json.loads(out.split("\n")[0])
    assert "1" in found  # bubblewrap's init is there to be read
    assert secret not in out
    assert "SPEEDPROOF_TEST_SECRET_TOKEN" not in out
    for entry, environ in found.items():
        assert environ == [
            "PATH=/usr/bin:/bin",
            "LANG=C.UTF-8",
            "PYTHONHASHSEED=0",
            *(["PWD=/"] if entry != "1" else []),
        ], entry


def test_under_cachegrind_the_callers_environment_stays_out_and_the_count_still_arrives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-speedproof-test-fedcba9876543210"
    monkeypatch.setenv("SPEEDPROOF_TEST_SECRET_TOKEN", secret)
    outcome = run_script(
        ENVIRON_DUMP, b"{}", limits=Limits().for_valgrind(), wrapper=cachegrind_wrapper()
    )
    assert outcome.exit_code == 0
    assert secret not in outcome.stdout.decode()
    assert json.loads(outcome.stdout.decode())["1"] == [
        "PATH=/usr/bin:/bin",
        "LANG=C.UTF-8",
        "PYTHONHASHSEED=0",
    ]
    assert parse_total_ir(outcome.side.decode()) > 0


def test_new_namespaces_and_ptrace_are_refused() -> None:
    out, _ = run(
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.unshare(0x10000000), ctypes.get_errno())\n"  # CLONE_NEWUSER
        "print(libc.ptrace(0, 0, 0, 0), ctypes.get_errno())\n"
    )
    assert out.split("\n")[:2] == ["-1 1", "-1 1"]


def test_an_endless_loop_is_killed_at_the_cpu_limit() -> None:
    outcome = run_script("while True:\n    pass\n", b"{}", limits=Limits(cpu_seconds=1))
    assert outcome.signal in (signal.SIGKILL, signal.SIGXCPU)
    assert not outcome.timed_out


def test_a_sleeping_script_is_killed_at_the_wall_clock_limit() -> None:
    # Killed, not waited for: the line after its 60 s sleep is never printed.
    script = "import time\nprint('asleep', flush=True)\ntime.sleep(60)\nprint('woke')\n"
    outcome = run_script(script, b"{}", limits=Limits(wall_seconds=1))
    assert outcome.timed_out
    assert outcome.stdout.decode().split() == ["asleep"]


def _processes_running(cmdline: bytes) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    count += handle.read() == cmdline
            except OSError:
                pass
    return count


def test_the_wall_clock_kill_leaves_no_process_of_the_sandbox_behind() -> None:
    # --new-session puts the script outside bwrap's process group; the pid namespace takes it
    # down when bwrap dies (--die-with-parent on its init).
    script = "import os\nos.execv('/bin/sleep', ['sleep', '987'])\n"
    outcome = run_script(script, b"{}", limits=Limits(wall_seconds=1))
    assert outcome.timed_out
    deadline = time.monotonic() + 5
    while _processes_running(b"sleep\x00987\x00") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_running(b"sleep\x00987\x00") == 0


def test_a_memory_bomb_gets_memory_error() -> None:
    _, err = run("x = bytearray(1 << 30)\n")
    assert "MemoryError" in err


def test_output_beyond_the_cap_is_cut_and_the_sandbox_killed() -> None:
    outcome = run_script(
        "import sys\nsys.stdout.write('x' * (64 << 20))\n",
        b"{}",
        limits=Limits(stdout_bytes=1 << 20),
    )
    assert outcome.capped == "stdout"
    assert len(outcome.stdout) < 2 << 20


@pytest.mark.parametrize("bwrap", ["/bin/false", "/nonexistent/bwrap"])
def test_a_sandbox_that_does_not_start_raises_sandbox_unavailable(bwrap: str) -> None:
    with pytest.raises(SandboxUnavailable):
        run_script("print(1)\n", b"{}", config=SandboxConfig(bwrap=bwrap))


def test_a_missing_interpreter_raises_sandbox_unavailable() -> None:
    with pytest.raises(SandboxUnavailable):
        run_script("print(1)\n", b"{}", config=SandboxConfig(python="/nonexistent/python3"))


# The harness's own layer: a job that grants dangerous builtins (as if the subset check and the
# restricted builtins had both failed) is still stopped by the harness's audit hook.

PERMISSIVE = ["open", "__import__", "getattr", "len", "print"]


def harness_job(source: str) -> bytes:
    document = json.loads(job_document(source, "solve", [[1]]))
    document["builtins"] = PERMISSIVE
    return json.dumps(document, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("body", "event"),
    [
        ("return open('/sp/main.py').read()", "open"),
        ("return __import__('os').getpid()", "import"),
        ("return __import__('sys')._getframe(0)", "sys._getframe"),
        ("return __import__('posix').fork()", "os.fork"),
        ("return __import__('posix').system('id')", "os.system"),
    ],
)
def test_the_harness_audit_hook_refuses_what_the_builtins_let_through(
    body: str, event: str
) -> None:
    run = run_harness(harness_job(f"def solve(x):\n    {body}\n"))
    assert run.status == "violation"
    assert event in run.detail


def test_the_subclass_walk_to_os_system_is_contained() -> None:
    source = (
        "def solve(x):\n"
        "    for c in ().__class__.__bases__[0].__subclasses__():\n"
        "        if c.__name__ == '_wrap_close':\n"
        "            return c.__init__.__globals__['system']('touch /tmp/pwned')\n"
        "    return 'no os'\n"
    )
    run = run_harness(harness_job(source))
    # Reaching a function's globals is an audited event; if os is not even loaded the walk
    # finds nothing. Either way nothing ran.
    assert run.status == "violation" or [r.output for r in run.results] == ['"no os"']


def test_a_result_document_forged_by_the_function_is_not_accepted() -> None:
    # Reaching posix through importlib's globals is not audited; writing a fake document and
    # leaving before the harness writes its own is. The forger cannot know the run's token.
    source = (
        "def solve(x):\n"
        "    for c in ().__class__.__bases__[0].__subclasses__():\n"
        "        if c.__name__ == 'FileLoader':\n"
        "            posix = c.__init__.__globals__['_os']\n"
        '            posix.write(1, b\'{"results": [{"out": 1, "args": [1]}]}\')\n'
        "            posix._exit(0)\n"
        "    return 0\n"
    )
    run = run_harness(harness_job(source))
    assert run.status == "violation"
    assert "not the harness's" in run.detail


def test_fork_through_the_harness_is_refused_by_the_audit_hook() -> None:
    run = run_harness(harness_job("def solve(x):\n    return __import__('os').fork()\n"))
    assert run.status == "violation"


def test_the_host_sees_no_file_the_sandbox_wrote(tmp_path: os.PathLike[str]) -> None:
    before = set(os.listdir("/tmp"))
    run("open('/tmp/sandbox-was-here', 'w').write('x')\n")
    assert "sandbox-was-here" not in set(os.listdir("/tmp")) - before


def test_an_annotation_that_got_past_the_subset_is_never_evaluated_by_the_harness() -> None:
    # The subset refuses both; given to the harness directly, neither annotation may run at
    # definition time. Evaluated, `max([])` would raise; postponed, the calls just run.
    source = "def solve(xs) -> max([]):\n    return xs + 1\n"
    run = run_harness(job_document(source, "solve", [[1], [2]]))
    assert run.status == "ok"
    assert [r.output for r in run.results] == ["2", "3"]


def test_a_walrus_annotation_that_got_past_the_subset_does_not_compile_in_the_harness() -> None:
    # Evaluated, the walrus would leave `memo` as a global that outlives a call.
    source = "def solve(xs) -> (memo := {}):\n    memo[len(memo)] = xs\n    return len(memo)\n"
    run = run_harness(job_document(source, "solve", [[1], [2]]))
    assert run.status == "harness_error"
    assert "SyntaxError" in run.detail and "annotation" in run.detail
    assert run.results == ()
