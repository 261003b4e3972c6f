from __future__ import annotations

import time
from pathlib import Path

import pytest

from speedproof.ground.errors import SandboxUnavailable
from speedproof.ground.process import run_process
from speedproof.ground.sandbox import SandboxSpec, Unsandboxed, build_env, make_sandbox


def _run(tmp_path: Path, code: str, *, network: bool = False) -> tuple[int, str]:
    sandbox = make_sandbox()
    spec = SandboxSpec(writable=(tmp_path,), env=build_env([]), network=network)
    result = run_process(
        ["python3", "-c", code], cwd=tmp_path, sandbox=sandbox, spec=spec, timeout_s=30
    )
    return result.exit_code, (result.stdout + result.stderr).decode()


def test_writes_outside_the_writable_folders_fail(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "open('/usr/speedproof-probe', 'w')")
    assert code != 0
    assert "Read-only file system" in output


def test_writes_inside_a_writable_folder_succeed(tmp_path: Path) -> None:
    code, _ = _run(tmp_path, f"open({str(tmp_path / 'ok')!r}, 'w').write('x')")
    assert code == 0
    assert (tmp_path / "ok").read_text() == "x"


def test_the_network_is_unshared(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "import socket; print(socket.if_nameindex())")
    assert code == 0
    assert "eth" not in output and "ens" not in output


def test_secret_variables_never_reach_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = build_env(["OPENAI_API_KEY", "LANG"])
    assert "OPENAI_API_KEY" not in env
    assert env["LANG"] == "C.UTF-8"


def test_variables_outside_the_allow_list_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPEEDPROOF_PROBE", "1")
    assert "SPEEDPROOF_PROBE" not in build_env([])
    assert build_env(["SPEEDPROOF_PROBE"])["SPEEDPROOF_PROBE"] == "1"


def test_a_missing_bubblewrap_is_an_error_not_a_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match="--no-sandbox"):
        make_sandbox()


def test_a_bubblewrap_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="cannot create a sandbox"):
        make_sandbox(executable="/bin/false")


def test_running_unsandboxed_needs_the_explicit_flag() -> None:
    assert isinstance(make_sandbox(allow_unsandboxed=True), Unsandboxed)
    assert make_sandbox().name == "bwrap"


def test_the_process_accounting_sees_the_child_inside_the_sandbox(tmp_path: Path) -> None:
    sandbox = make_sandbox()
    spec = SandboxSpec(writable=(tmp_path,), env=build_env([]))
    code = "x = bytearray(100 * 1024 * 1024)\nfor i in range(0, len(x), 4096): x[i] = 1"
    result = run_process(
        ["python3", "-c", code], cwd=tmp_path, sandbox=sandbox, spec=spec, timeout_s=30
    )
    assert result.exit_code == 0
    assert result.max_rss_kib >= 100 * 1024
    assert result.cpu_s > 0


def test_a_timeout_kills_every_process_the_target_started(tmp_path: Path) -> None:
    sandbox = make_sandbox()
    spec = SandboxSpec(writable=(tmp_path,), env=build_env([]))
    token = f"speedproof-orphan-{tmp_path.name}"
    # The grandchild escapes into its own session, as a daemon would.
    script = f"setsid python3 -c 'import time; time.sleep(60)' {token} & sleep 60"
    result = run_process(
        ["sh", "-c", script], cwd=tmp_path, sandbox=sandbox, spec=spec, timeout_s=1
    )
    assert result.timed_out
    assert _survivors(token) == []


def _survivors(token: str) -> list[int]:
    """Processes whose command line carries `token`, ignoring zombies awaiting their reaper."""
    found: list[int] = []
    for _ in range(100):
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().split()[2]
            except OSError:
                continue
            if token.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
        if not found:
            return found
        time.sleep(0.05)
    return found


def test_an_interpreter_kept_under_tmp_stays_visible_inside_the_sandbox(tmp_path: Path) -> None:
    # A checkout under /tmp keeps its .venv there, and the sandbox mounts a private /tmp.
    import site
    import subprocess
    import sys

    import speedproof

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    paths = [str(Path(speedproof.__file__).parents[1]), *site.getsitepackages()]
    code = (
        "import sys; from pathlib import Path\n"
        "from speedproof.ground.sandbox import SandboxSpec, build_env, make_sandbox\n"
        "from speedproof.ground.process import run_process\n"
        "r = run_process([sys.executable, '-c', 'print(42)'], cwd=Path('/'),\n"
        "    sandbox=make_sandbox(), spec=SandboxSpec(env=build_env([])), timeout_s=60)\n"
        "print(r.exit_code, r.stdout.decode().strip(), r.stderr.decode().strip())\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(paths)},
    )
    assert done.stdout.split()[:2] == ["0", "42"], done.stdout + done.stderr
