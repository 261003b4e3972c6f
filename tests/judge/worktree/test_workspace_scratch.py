from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from speedproof.judge.worktree.scratch import scratch_folder, sweep_scratch
from speedproof.judge.worktree.trees import MARKER_NAME, TREE_NAME

CHILD = textwrap.dedent(
    """
    import sys, time
    from speedproof.judge.worktree.scratch import scratch_folder
    with scratch_folder() as folder:
        (folder / "half-written").write_text("x")
        print(folder, flush=True)
        time.sleep(60)
    """
)


def _killed_childs_folder(tmp_path: Path) -> Path:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    folder = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    return folder


@pytest.mark.timeout(60)
def test_a_folder_left_by_a_killed_process_is_swept(tmp_path: Path) -> None:
    folder = _killed_childs_folder(tmp_path)
    assert folder.is_dir(), "SIGKILL leaves the folder behind; that is what the sweep is for"
    assert folder.parent == tmp_path.resolve()
    assert sweep_scratch(tmp_path) == [folder]
    assert not folder.exists()


def test_a_live_owners_folder_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with scratch_folder() as folder:
        assert sweep_scratch(tmp_path) == []
        assert folder.is_dir()
    assert not folder.exists()


def test_a_folder_without_an_owner_record_or_holding_a_worktree_is_left_alone(
    tmp_path: Path,
) -> None:
    unknown = tmp_path / "speedproof-unknown"
    unknown.mkdir()
    holder = tmp_path / "speedproof-holder"
    (holder / TREE_NAME).mkdir(parents=True)
    (holder / MARKER_NAME).write_text('{"pid": 999999999}', encoding="utf-8")
    assert sweep_scratch(tmp_path) == []
    assert unknown.is_dir() and holder.is_dir()


def test_the_folder_goes_when_its_block_ends_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(RuntimeError), scratch_folder("speedproof-x-") as folder:
        (folder / "read-only").mkdir(mode=0o500)
        raise RuntimeError("the judge failed")
    assert not folder.exists()


def test_an_unrecorded_folder_is_swept_only_past_a_grace_the_caller_names(tmp_path: Path) -> None:
    old = tmp_path / "speedproof-job-old"
    young = tmp_path / "speedproof-job-young"
    old.mkdir()
    young.mkdir()
    os.utime(old, (1_000_000.0, 1_000_000.0))
    assert sweep_scratch(tmp_path) == []
    assert sweep_scratch(tmp_path, prefix="speedproof-job-", unmarked_grace_s=600.0) == [old]
    assert not old.exists() and young.is_dir()
